import { escapeXml, escapeXmlText } from './xml.js';

/**
 * Layer 2 as XML. The body is escaped rather than wrapped in CDATA so any text, including "]]>",
 * round-trips through an XML parser unchanged.
 */
export function renderSkillXml(name: string, body: string): string {
  return `<skill name="${escapeXml(name)}">\n${escapeXmlText(body)}\n</skill>\n`;
}

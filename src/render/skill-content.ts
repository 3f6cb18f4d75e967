import { escapeXmlAttribute, escapeXmlText } from './xml.js';

/**
 * Names the XML rendering in ETags. `xml2`: text escaped only as XML requires (`>` and quotes read as
 * written); renderings made before escaped more, and exact-version answers are cached for a year, so
 * the new bytes get a validator of their own.
 */
export const SKILL_XML_RENDERING = 'xml2';

/**
 * Layer 2 as XML. The body is escaped rather than wrapped in CDATA so any text, including "]]>",
 * round-trips through an XML parser unchanged.
 */
export function renderSkillXml(name: string, body: string): string {
  return `<skill name="${escapeXmlAttribute(name)}">\n${escapeXmlText(body)}\n</skill>\n`;
}

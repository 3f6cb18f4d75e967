/**
 * Escaping for the XML that agents read (the `<available_skills>` fragment, `format=xml` bodies):
 * only what XML 1.0 requires, so descriptions and bodies read as written (`->`, quotes, apostrophes)
 * and cost no more tokens than they must.
 */

/**
 * Element content (XML 1.0 CharData): `&` and `<` always, and `>` only where it would close a
 * `]]>`, the one place a raw `>` is not allowed.
 */
export function escapeXmlText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/]]>/g, ']]&gt;');
}

/** An attribute value delimited by double quotes (XML 1.0 AttValue): `&`, `<` and `"`. */
export function escapeXmlAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
}

// Making a token value safe for a line-oriented log. The set of characters and their spelling
// follow morgan 1.12, so lines stay byte-identical: C0 and C1 controls, DEL, the two Unicode line
// separators, the quote that delimits fields in the combined format, and the backslash that
// starts every escape. After escaping, no header, URL or user name can end a line early, forge a
// second line, or send a terminal control sequence.

// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029"\\]/
// eslint-disable-next-line no-control-regex
const UNSAFE_ALL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029"\\]/g

function escapeChar (ch: string): string {
  switch (ch) {
    case '\\': return '\\\\'
    case '"': return '\\"'
    case '\b': return '\\b'
    case '\f': return '\\f'
    case '\n': return '\\n'
    case '\r': return '\\r'
    case '\t': return '\\t'
    default: return '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0')
  }
}

/** `value` with every unsafe character replaced by its backslash escape. */
export function escapeLogField (value: string): string {
  // Almost every value is clean: a test is much cheaper than a replace that finds nothing.
  return UNSAFE.test(value) ? value.replace(UNSAFE_ALL, escapeChar) : value
}

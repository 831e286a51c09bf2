// Strings kept for many log lines (a run of repeating tokens, a json key, the date of the
// second), made flat once so that each line copies them as one block; and lines waiting for a
// slow stream, held flat so that each takes about its own length in memory.

// The character `flattened` reads: stored, so the read is not optimized away as unused.
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- written only, on purpose
let lastRead = 0

/**
 * `text`, flattened. A string made by concatenation is a tree of its pieces until V8 copies
 * it into one block, which it does for every line when the line is encoded, walking the tree.
 * A kept string goes into many lines: flattened once, each line copies it as one block.
 * Reading a character of a concatenated string makes V8 flatten it in place.
 */
export function flattened (text: string): string {
  if (text.length > 0) lastRead = text.charCodeAt(0)
  return text
}

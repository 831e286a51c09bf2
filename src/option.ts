// Options that only foyer has (json's `onProtoPoisoning`, the logger's `maxPending`) are read
// from the options object and the objects it inherits from, but never from Object.prototype:
// a value put there by prototype pollution elsewhere in the application must not switch off a
// protection or make every logger refuse to be created. The options morgan and body-parser also
// take are read as they read them, inherited values included, so that a config behaves the same.

/** The value of foyer's own option `key` in `options`, not counting Object.prototype. */
export function ownOption (options: unknown, key: string): unknown {
  if (options === null || options === undefined) return undefined
  let holder: unknown = typeof options === 'object' || typeof options === 'function' ? options : Object.getPrototypeOf(options)
  while (holder !== null && holder !== Object.prototype) {
    if (Object.prototype.hasOwnProperty.call(holder, key)) return (options as Record<string, unknown>)[key]
    holder = Object.getPrototypeOf(holder)
  }
  return undefined
}

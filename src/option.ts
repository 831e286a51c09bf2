// Options that only foyer has (json's `onProtoPoisoning`, the logger's `maxPending`) are read
// from the options object and the objects it inherits from, but never from an Object.prototype:
// a value put there by prototype pollution elsewhere in the application must not switch off a
// protection or make every logger refuse to be created. The options morgan and body-parser also
// take are read as they read them, inherited values included, so that a config behaves the same.
import { isProxy } from 'node:util/types'

/** The value of foyer's own option `key` in `options`, not counting Object.prototype. */
export function ownOption (options: unknown, key: string): unknown {
  if (options === null || options === undefined) return undefined
  // (a Proxy may answer for properties no object of its chain holds: it is asked)
  if (isProxy(options)) return (options as Record<string, unknown>)[key]
  let holder: unknown = typeof options === 'object' || typeof options === 'function' ? options : Object.getPrototypeOf(options)
  while (holder !== null && !isObjectPrototype(holder as object)) {
    if (Object.prototype.hasOwnProperty.call(holder, key)) return (options as Record<string, unknown>)[key]
    holder = Object.getPrototypeOf(holder)
  }
  return undefined
}

/** Whether `holder` is the Object.prototype of this realm or of another one (a vm context's). */
function isObjectPrototype (holder: object): boolean {
  if (holder === Object.prototype) return true
  if (Object.getPrototypeOf(holder) !== null) return false
  const constructor: unknown = Object.getOwnPropertyDescriptor(holder, 'constructor')?.value
  return typeof constructor === 'function' && (constructor as { prototype?: unknown }).prototype === holder
}

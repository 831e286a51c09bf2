// Options that only foyer has (json's `onProtoPoisoning`, the logger's `maxPending`) are read
// from the options object and the objects it inherits from, but never from an Object.prototype:
// a value put there by prototype pollution elsewhere in the application must not switch off a
// protection or make every logger refuse to be created. The options morgan and body-parser also
// take are read as they read them, inherited values included, so that a config behaves the same.
import { isProxy } from 'node:util/types'

// Past this many Proxies, a chain is not walked further: a Proxy's getPrototypeOf may never end
// (a chain of ordinary objects always does, however long).
const MAX_PROXIES = 64

/** The value of foyer's own option `key` in `options`, not counting Object.prototype. */
export function ownOption (options: unknown, key: string): unknown {
  if (options === null || options === undefined) return undefined
  // Whether an object of the chain holds `key`; else the Object.prototype that ends the chain,
  // null for a chain that ends on none (a null-prototype object's), or undefined when the chain
  // cannot be told (a Proxy's trap that throws, or a chain with no end).
  let own = false
  let end: object | null | undefined
  try {
    let holder: unknown = typeof options === 'object' || typeof options === 'function' ? options : Object.getPrototypeOf(options)
    for (let proxies = 0; proxies <= MAX_PROXIES; proxies += isProxy(holder) ? 1 : 0) {
      if (holder === null) {
        end = null
        break
      }
      if (isObjectPrototype(holder as object)) {
        end = holder as object
        break
      }
      if (Object.prototype.hasOwnProperty.call(holder, key)) {
        own = true
        break
      }
      holder = Object.getPrototypeOf(holder)
    }
  } catch {}
  // held by the options or an object they inherit from, or a chain that cannot be told: read as
  // body-parser reads its options
  if (own || end === undefined) return (options as Record<string, unknown>)[key]
  // A Proxy may answer for a property no object of its chain holds: it is asked, and its answer
  // taken unless it is the Object.prototype's own value, passed on from its target.
  if (!isProxy(options)) return undefined
  const value = (options as Record<string, unknown>)[key]
  const inherited = end !== null && Object.prototype.hasOwnProperty.call(end, key) && Object.is((end as Record<string, unknown>)[key], value)
  return inherited ? undefined : value
}

/**
 * Whether `holder` is the Object.prototype of this realm or of another one (a vm context's): the
 * one object with the `__proto__` accessor, which a pollution that assigns values cannot replace
 * (assigning to it sets a prototype), or, when node runs with --disable-proto=delete, an object
 * with no prototype and a `constructor` whose prototype it is (which such a pollution of another
 * realm can replace: there, its Object.prototype is not told apart).
 */
function isObjectPrototype (holder: object): boolean {
  if (holder === Object.prototype) return true
  if (Object.getPrototypeOf(holder) !== null) return false
  if (typeof Object.getOwnPropertyDescriptor(holder, '__proto__')?.get === 'function') return true
  const constructor: unknown = Object.getOwnPropertyDescriptor(holder, 'constructor')?.value
  return typeof constructor === 'function' && (constructor as { prototype?: unknown }).prototype === holder
}

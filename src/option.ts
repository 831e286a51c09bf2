// Options that only foyer has (json's `onProtoPoisoning`, the logger's `maxPending`) are read
// from the options object and the ordinary objects it inherits from (a Proxy is asked when it is
// the options object itself), but not from an Object.prototype: a value put there by prototype
// pollution elsewhere in the application must not switch off a protection or make every logger
// refuse to be created. The options morgan and body-parser also take are read as they read them,
// inherited values included, so that a config behaves the same.
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
    let proxies = 0
    for (;;) {
      if (holder === null) {
        end = null
        break
      }
      if (isProxy(holder) && ++proxies > MAX_PROXIES) break
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
  // held by the options or an object they inherit from: read as body-parser reads its options
  if (own) return (options as Record<string, unknown>)[key]
  // A chain that cannot be told is read the same way, and a Proxy may answer for a property no
  // object of its chain holds: it is asked. Either answer is taken unless it is the own value of
  // this realm's Object.prototype or of the one that ends the chain, passed on.
  if (end !== undefined && !isProxy(options)) return undefined
  const value = (options as Record<string, unknown>)[key]
  return holds(Object.prototype, key, value) || (end != null && holds(end, key, value)) ? undefined : value
}

/** Whether `holder` has `value` as its own `key`. */
function holds (holder: object, key: string, value: unknown): boolean {
  return Object.prototype.hasOwnProperty.call(holder, key) && Object.is((holder as Record<string, unknown>)[key], value)
}

// Whether Object.prototype keeps its `__proto__` accessor (node not run with
// --disable-proto=delete, and the accessor not deleted before this module loaded): every realm's
// Object.prototype has it then.
const PROTO_ACCESSOR = typeof Object.getOwnPropertyDescriptor(Object.prototype, '__proto__')?.get === 'function'

/**
 * Whether `holder` is the Object.prototype of this realm or of another one (a vm context's): the
 * one object with the `__proto__` accessor, which a pollution that assigns values cannot replace
 * (assigning to it sets a prototype). When node runs with --disable-proto=delete, it is known as
 * an object with no prototype and a `constructor` whose prototype it is, which a pollution of
 * another realm can replace: there, that realm's Object.prototype is not told apart.
 */
function isObjectPrototype (holder: object): boolean {
  if (holder === Object.prototype) return true
  if (Object.getPrototypeOf(holder) !== null) return false
  if (PROTO_ACCESSOR) return typeof Object.getOwnPropertyDescriptor(holder, '__proto__')?.get === 'function'
  const constructor: unknown = Object.getOwnPropertyDescriptor(holder, 'constructor')?.value
  return typeof constructor === 'function' && (constructor as { prototype?: unknown }).prototype === holder
}

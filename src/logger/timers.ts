// The timers and the clock the logger schedules its own work with: a sink's batched writes, and
// the lines of responses that finished before their logger waited for them.
//
// Test suites replace the global timers with fake ones (node:test's mock.timers, Jest, Sinon,
// Vitest) that run only when the test moves its clock on; morgan schedules nothing of its own and
// writes its lines at once, so a suite that swapped it for foyer would otherwise see no line.
// - The timers are node's own, taken from node:timers when this module loads, as node's modules
//   and on-finished take theirs: fakes installed later (Jest's leave node:timers alone; Sinon's
//   and node:test's replace its functions too) do not hold the lines.
// - Fakes already installed when this module loads are taken too, and are told by their shape
//   (node's own setTimeout and setImmediate have a util.promisify.custom; node:test's fakes have
//   none, and Sinon's, which copy it, carry their `clock`). While only fakes are at hand, a sink
//   writes each line at once and the rest goes on process.nextTick; once node:timers holds node's
//   own again (the test put its fakes away), they are taken.
// - The batch window is measured with process.uptime(), which no fake replaces, not Date.now(),
//   which a fake Date present at load would stop.
// The deprecated `buffer` option keeps the global setTimeout of the moment, as morgan's does.
import * as timers from 'node:timers'
import { promisify } from 'node:util'

type Callback<A> = (arg: A) => void

/** Whether `f` is node's own timer function rather than a test's fake. */
function isNodes (f: unknown): boolean {
  return typeof f === 'function' && typeof (f as { [promisify.custom]?: unknown })[promisify.custom] === 'function' && !Object.hasOwn(f, 'clock')
}

let immediate = timers.setImmediate
let timeout = timers.setTimeout
let usable = isNodes(immediate) && isNodes(timeout)
// node:timers' functions when last looked at: a change means fakes came or went.
let seenImmediate = immediate
let seenTimeout = timeout

/** Whether node's own timers are at hand (not only a test's fakes). */
export function nodeTimersAtHand (): boolean {
  if (timers.setImmediate !== seenImmediate || timers.setTimeout !== seenTimeout) {
    seenImmediate = timers.setImmediate
    seenTimeout = timers.setTimeout
    if (!usable && isNodes(seenImmediate) && isNodes(seenTimeout)) {
      immediate = seenImmediate
      timeout = seenTimeout
      usable = true
    }
  }
  return usable
}

/** Runs `callback(arg)` in this turn's check phase, or on the next tick while only fakes are at hand. */
export function scheduleImmediate<A> (callback: Callback<A>, arg: A): void {
  if (nodeTimersAtHand()) immediate(callback, arg)
  else process.nextTick(callback, arg)
}

/**
 * Runs `callback(arg)` in `ms` milliseconds, or on the next tick while only fakes are at hand;
 * without keeping the process alive for it when `keepAlive` is false.
 */
export function scheduleTimeout<A> (callback: Callback<A>, ms: number, arg: A, keepAlive = true): void {
  if (nodeTimersAtHand()) {
    const timer = timeout(callback, ms, arg)
    if (!keepAlive) timer.unref()
  } else {
    process.nextTick(callback, arg)
  }
}

/** Milliseconds on a monotonic clock no fake replaces, for the batch window. */
export function monotonicMs (): number {
  return process.uptime() * 1000
}

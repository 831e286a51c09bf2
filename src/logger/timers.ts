// The timers the logger schedules its own work with: a sink's batched writes, and the lines of
// responses that finished before their logger waited for them. They are node's own, taken when
// this module loads, as node's modules and on-finished take theirs. Test suites replace the
// global timers with fake ones (node:test's mock.timers, Jest, Sinon) that run only when the
// test moves its clock on; morgan schedules nothing of its own and writes its lines at once, so
// a suite that swapped it for foyer would otherwise see no line at all. The deprecated `buffer`
// option keeps the global setTimeout of the moment, as morgan's does.
import * as timers from 'node:timers'

export const scheduleImmediate: typeof setImmediate = timers.setImmediate
export const scheduleTimeout: typeof setTimeout = timers.setTimeout

/** Milliseconds of the wall clock, for the batch window: a fake Date does not move it. */
export const wallClock: () => number = Date.now

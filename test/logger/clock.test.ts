// The clock behind :date and the timings: UTC dates in three formats, built once per second,
// and morgan's millisecond arithmetic.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { currentDate, fixed, formatClfDate, formatDuration, formatElapsed, recordStartTime, type StartMark } from '../../src/logger/clock.js'
import { compareWithMorgan, maskClock, sleep } from '../helpers/logger-lines.js'
import { request } from '../helpers/server.js'

/** Runs `fn` at the start of a second, so it does not straddle two. */
async function early<T> (fn: () => T): Promise<T> {
  while (Date.now() % 1000 > 500) await sleep(10)
  return fn()
}

describe('the common log format date', () => {
  it('is day/month/year:hours:minutes:seconds +0000 in UTC, two-digit padded', () => {
    assert.equal(formatClfDate(new Date(Date.UTC(2000, 9, 10, 13, 55, 36))), '10/Oct/2000:13:55:36 +0000')
    assert.equal(formatClfDate(new Date(Date.UTC(2024, 0, 5, 3, 4, 5))), '05/Jan/2024:03:04:05 +0000')
    assert.equal(formatClfDate(new Date(Date.UTC(1999, 11, 31, 23, 59, 59))), '31/Dec/1999:23:59:59 +0000')
  })

  it('names every month by its three-letter English abbreviation', () => {
    const months = Array.from({ length: 12 }, (_, m) => formatClfDate(new Date(Date.UTC(2021, m, 1))).slice(3, 6))
    assert.deepEqual(months, ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'])
  })

  it('does not depend on the local time zone', async () => {
    const { execFile } = await import('node:child_process')
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', '-e', `
        const { formatClfDate } = require('./src/logger/clock.ts')
        process.stdout.write(formatClfDate(new Date(Date.UTC(2000, 0, 1, 0, 30, 0))))
      `], { env: { ...process.env, TZ: 'Pacific/Kiritimati' } }, (err, stdout) => { if (err !== null) reject(err); else resolve(stdout) })
    })
    assert.equal(out, '01/Jan/2000:00:30:00 +0000')
  })
})

describe('the current date', () => {
  it('is the current second in each format', async () => {
    const [date, clf, web, iso] = await early(() => [new Date(), currentDate('clf'), currentDate('web'), currentDate('iso')])
    assert.equal(clf, formatClfDate(date as Date))
    assert.equal(web, (date as Date).toUTCString())
    assert.equal((iso as string).slice(0, 19), (date as Date).toISOString().slice(0, 19))
  })

  it('is the web format without an argument or with an empty one', async () => {
    const [web, none, empty] = await early(() => [currentDate('web'), currentDate(undefined), currentDate('')])
    assert.equal(none, web)
    assert.equal(empty, web)
  })

  it('is undefined for an unknown format', () => {
    assert.equal(currentDate('unix'), undefined)
    assert.equal(currentDate('CLF'), undefined)
  })

  it('keeps the milliseconds in the ISO format', async () => {
    const first = currentDate('iso') as string
    await sleep(15)
    const second = currentDate('iso') as string
    assert.match(first, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    assert.notEqual(first, second)
    const drift = Math.abs(Date.parse(second) - Date.now())
    assert.ok(drift < 1000, `ISO date off by ${drift} ms`)
  })

  /** Runs `fn` with `new Date()` giving `time`, as fake timers that replace the constructor do. */
  function atTime<T> (time: number, fn: () => T): T {
    const RealDate = Date
    class FakeDate extends RealDate {
      constructor (...args: unknown[]) {
        if (args.length === 0) super(time)
        else super(...(args as [number]))
      }
    }
    globalThis.Date = FakeDate as DateConstructor
    try {
      return fn()
    } finally {
      globalThis.Date = RealDate
    }
  }

  it('gives the ISO text of the millisecond it is called in, also when the clock repeats or goes back', () => {
    const base = Date.UTC(2026, 10, 22, 11, 59, 59, 998)
    // the same millisecond twice, the next ones across a second, then back by five seconds and
    // to a millisecond seen before
    const times = [base, base, base + 1, base + 2, base + 2, base + 12, base - 5000, base + 1, base + 1]
    for (const t of times) assert.equal(atTime(t, () => currentDate('iso')), new Date(t).toISOString())
  })

  it('reads the clock through new Date(), as morgan does: a fraction of a millisecond is dropped, and Date.now alone does not count', () => {
    const base = Date.UTC(2024, 0, 1)
    assert.equal(atTime(base + 0.5, () => currentDate('iso')), '2024-01-01T00:00:00.000Z')
    assert.equal(atTime(-0.5, () => currentDate('iso')), '1970-01-01T00:00:00.000Z')
    assert.equal(atTime(-0.5, () => currentDate('clf')), '01/Jan/1970:00:00:00 +0000')
    const realNow = Date.now
    Date.now = () => base
    try {
      assert.notEqual(currentDate('clf'), '01/Jan/2024:00:00:00 +0000')
    } finally {
      Date.now = realNow
    }
  })

  it('prints an invalid clock as morgan does, and throws for its ISO form as toISOString does', () => {
    for (const time of [Number.NaN, 8.64e15 + 1]) {
      assert.equal(atTime(time, () => currentDate('clf')), 'NaN/undefined/NaN:NaN:NaN:NaN +0000')
      assert.equal(atTime(time, () => currentDate('web')), 'Invalid Date')
      assert.throws(() => atTime(time, () => currentDate('iso')), RangeError)
    }
  })

  /** Runs `fn` with `Date.prototype[name]` replaced by `stub`, as `jest.spyOn(Date.prototype, name)` does. */
  function withDateMethod<T> (name: 'toISOString' | 'toUTCString' | 'getUTCHours' | 'getTime', stub: () => unknown, fn: () => T): T {
    const proto = Date.prototype as unknown as Record<string, unknown>
    const real = proto[name]
    proto[name] = stub
    try {
      return fn()
    } finally {
      proto[name] = real
    }
  }

  it('is made by the Date methods in place at the time: stubbed ones are called for each date, as morgan calls them', async () => {
    await early(() => {
      // the texts of this second are made and kept first
      const real = { iso: currentDate('iso'), web: currentDate('web'), clf: currentDate('clf') }
      assert.equal(withDateMethod('toISOString', () => '2020-01-01T00:00:00.000Z', () => currentDate('iso')), '2020-01-01T00:00:00.000Z')
      assert.equal(withDateMethod('toUTCString', () => 'Wed, 01 Jan 2020 00:00:00 GMT', () => currentDate('web')), 'Wed, 01 Jan 2020 00:00:00 GMT')
      assert.equal(withDateMethod('getUTCHours', () => 7, () => currentDate('clf')), formatClfDate(new Date()).replace(/:\d{2}:/, ':07:'))
      // a stub in place when the second changes is not kept after it is taken away
      assert.equal(withDateMethod('toUTCString', () => 'MOCKED', () => currentDate(undefined)), 'MOCKED')
      assert.equal(currentDate('web'), real.web)
      assert.equal(currentDate('clf'), real.clf)
      assert.match(currentDate('iso') as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    })
    // stubbed before any date of a second was made: the ISO text is the stub's whole, milliseconds too
    const stubbed = withDateMethod('getTime', () => Date.UTC(1999, 0, 1), () => withDateMethod('toISOString', () => '2020-01-01T00:00:00.000Z', () => currentDate('iso')))
    assert.equal(stubbed, '2020-01-01T00:00:00.000Z')
  })

  it('calls Date methods stubbed before it was loaded for each date: a plain function, a Proxy (as node:test\'s mock.method makes) or a bound function', async () => {
    const { execFile } = await import('node:child_process')
    const run = async (stub: string, dates: string): Promise<string> => await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', '-e', `
        let made = 0
        ${stub}
        const { currentDate } = require('./src/logger/clock.ts')
        process.stdout.write(${dates})
      `], (err, stdout) => { if (err !== null) reject(err); else resolve(stdout) })
    })
    assert.equal(await run("Date.prototype.toISOString = function () { return 'stub#' + String(++made) }",
      "[currentDate('iso'), currentDate('iso')].join(' ')"), 'stub#1 stub#2')
    assert.equal(await run("Date.prototype.toUTCString = new Proxy(Date.prototype.toUTCString, { apply: () => 'stub#' + String(++made) })",
      "[currentDate('web'), currentDate('web')].join(' ')"), 'stub#1 stub#2')
    // a bound getter gives the hours of the date it is bound to, whatever the date it is called on
    assert.equal(await run('const bound = new Date(Date.UTC(2020, 0, 1, 7)); Date.prototype.getUTCHours = Date.prototype.getUTCHours.bind(bound)',
      "[currentDate('clf').slice(11, 15), (bound.setUTCHours(8), currentDate('clf').slice(11, 15))].join(' ')"), ':07: :08:')
  })

  it('matches the date morgan writes for the same request with Date methods stubbed', async () => {
    const proto = Date.prototype
    const { toISOString, toUTCString } = proto
    proto.toISOString = () => '2020-01-01T00:00:00.000Z'
    proto.toUTCString = () => 'Wed, 01 Jan 2020 00:00:00 GMT'
    try {
      const { ours, theirs } = await compareWithMorgan(':date[iso] :date[web] :date', async (port) => await request(port))
      assert.equal(ours, theirs)
      assert.equal(ours, '2020-01-01T00:00:00.000Z Wed, 01 Jan 2020 00:00:00 GMT Wed, 01 Jan 2020 00:00:00 GMT')
    } finally {
      proto.toISOString = toISOString
      proto.toUTCString = toUTCString
    }
  })

  it('gives what stubbed Date methods return as it is, as morgan\'s token does (the line escapes it)', () => {
    assert.equal(withDateMethod('toUTCString', () => 'a"b\nc', () => currentDate('web')), 'a"b\nc')
    assert.equal(withDateMethod('toUTCString', () => 0, () => currentDate('web')), 0)
  })

  it('takes the date from whatever new Date() makes, when Date is replaced by a function making other objects', () => {
    const RealDate = Date
    globalThis.Date = function FakeDate () { return { toISOString: () => 'fake-iso', toUTCString: () => 'fake-web' } } as unknown as DateConstructor
    try {
      assert.equal(currentDate('iso'), 'fake-iso')
      assert.equal(currentDate('web'), 'fake-web')
      assert.equal(currentDate('bogus'), undefined)
    } finally {
      globalThis.Date = RealDate
    }
  })

  it('makes one Date per call, as morgan does', () => {
    const RealDate = Date
    let made = 0
    class CountingDate extends RealDate {
      constructor (...args: unknown[]) {
        made++
        if (args.length === 0) super(RealDate.UTC(2031, 4, 6, 7, 8, 9) + made * 1000)
        else super(...(args as [number]))
      }
    }
    globalThis.Date = CountingDate as DateConstructor
    try {
      // each call in a new second: the texts are made again, from the date of the call
      assert.equal(currentDate('clf'), '06/May/2031:07:08:10 +0000')
      assert.equal(currentDate('web'), 'Tue, 06 May 2031 07:08:11 GMT')
      assert.equal(currentDate('iso'), '2031-05-06T07:08:12.000Z')
      assert.equal(made, 3)
    } finally {
      globalThis.Date = RealDate
    }
  })

  it('reuses one string within a second and moves on with the next', async () => {
    const [a, b] = await early(() => [currentDate('clf'), currentDate('clf')])
    assert.equal(a, b)
    await sleep(1000 - (Date.now() % 1000) + 20)
    const c = currentDate('clf')
    assert.notEqual(c, a)
    assert.equal(c, formatClfDate(new Date()))
  })

  it('matches the date morgan writes for the same request', async () => {
    const { ours, theirs } = await early(async () => await compareWithMorgan(':date[clf] :date[web] :date', async (port) => await request(port)))
    assert.equal(ours, theirs)
    assert.equal(maskClock(ours), '<clf> <web> <web>')
  })
})

describe('durations', () => {
  it('are milliseconds between two hrtime marks, with 3 decimals by default', () => {
    assert.equal(formatDuration([10, 0], [10, 1_500_000], undefined), '1.500')
    assert.equal(formatDuration([1, 999_000_000], [2, 1_000_000], undefined), '2.000')
  })

  it('print what toFixed(3) prints, ties and near-ties included (property)', () => {
    const seconds = fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 2_000_000 }))
    // nanoseconds ending in 500 put the product exactly on a tie; around them, near one
    const nanos = fc.oneof(fc.integer({ min: 0, max: 999_999_999 }), fc.integer({ min: 0, max: 999_999 }).map((n) => n * 1000 + 500), fc.integer({ min: 0, max: 999_999 }).map((n) => n * 1000 + 499), fc.integer({ min: 0, max: 999_999 }).map((n) => n * 1000 + 501))
    fc.assert(fc.property(seconds, nanos, seconds, nanos, (s0, n0, ds, n1) => {
      const start: [number, number] = [s0, n0]
      const end: [number, number] = [s0 + ds, n1]
      const ms = ds * 1e3 + (n1 - n0) * 1e-6
      assert.equal(formatDuration(start, end, undefined), ms.toFixed(3), `${ms}`)
    }), { numRuns: 20_000 })
  })

  it('print any number as toFixed does', () => {
    const samples = [0, -0, 1.2345, 1.0005, 2.5e-4, 4.9999e-4, 0.0005, 999.9995, 1e9 - 0.0005, 1e9, 1e21, -1.5, Number.NaN, Infinity, 123456.789, 0.1 + 0.2]
    for (const ms of samples) assert.equal(fixed(ms, undefined), ms.toFixed(3), `${ms}`)
    fc.assert(fc.property(fc.double({ min: 0, max: 1e10, noNaN: true }), (ms) => {
      assert.equal(fixed(ms, undefined), ms.toFixed(3), `${ms}`)
    }), { numRuns: 20_000 })
  })

  it('read process.hrtime from the global process at each call, also when the whole object is replaced', () => {
    const realProcess = globalThis.process
    let calls = 0
    const fake = Object.assign(Object.create(realProcess) as NodeJS.Process, {
      hrtime: (start?: [number, number]): [number, number] => {
        calls++
        return start === undefined ? [100, 0] : [0, 250_000_000]
      }
    })
    const mark: StartMark = {}
    globalThis.process = fake
    try {
      recordStartTime.call(mark)
      assert.deepEqual(mark._startAt, [100, 0])
      assert.equal(formatElapsed([100, 0], undefined), '250.000')
    } finally {
      globalThis.process = realProcess
    }
    assert.equal(calls, 2)
  })

  it('take the number of decimals as a string or a number', () => {
    assert.equal(formatDuration([0, 0], [0, 1_234_567], '0'), '1')
    assert.equal(formatDuration([0, 0], [0, 1_234_567], '5'), '1.23457')
    assert.equal(formatDuration([0, 0], [0, 1_234_567], 2), '1.23')
  })
})

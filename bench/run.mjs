// `npm run bench`: every case, its variants side by side, each in its own server process.
//
// Knobs (environment variables):
//   BENCH_ROUNDS=7        rounds; each round runs every variant of a case once, in rotating order
//   BENCH_DURATION=2      measured seconds per variant and round
//   BENCH_WARMUP=1        warm-up: twice this many seconds before each measured window
//   BENCH_CONNECTIONS=10  autocannon connections
//   BENCH_RATE=...        requests per second for all connections together (autocannon's
//                         overallRate): every variant gets the same offered load. Unset: as fast
//                         as each server answers.
//   BENCH_SLICES=4        slices each measured window is cut into, the variants of a round taking
//                         turns slice by slice; 1: one whole window per variant, one server at a time
//   BENCH_CASES=...       comma list: case names, substrings of them ('json'), or a group ('body', 'logger')
//   BENCH_VARIANTS=...    comma list of variant names or substrings; the floor always runs
//   BENCH_OUT=dir         where RESULTS.md and results.json go (default: bench/ for a complete run,
//                         bench/results/tmp/ for a short or filtered one)
//   BENCH_BASELINE=dir    add the variant `baseline`: foyer loaded from dir, a copy of an earlier dist/
//                         (dir1,dir2,...: baseline, baseline-2, ...)
//   BENCH_CPU_PROF=dir    start the servers with --cpu-prof, profiles in dir
// Smoke run: BENCH_DURATION=1 BENCH_ROUNDS=1 npm run bench
import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import os from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CASES, FLOOR, NOTES, payloadOf, requestOf } from './cases.mjs'
import { listFromEnv, numberFromEnv } from './env.mjs'
import { canPin, killChildren, LoadGeneratorError, loadProblem, startLoadGenerator, startServer } from './processes.mjs'
import { markdown, median, summarizeCase } from './report.mjs'

const here = dirname(fileURLToPath(import.meta.url))

function readConfig () {
  const casesFilter = listFromEnv('BENCH_CASES')
  const variantsFilter = listFromEnv('BENCH_VARIANTS')
  const config = {
    rounds: Math.round(numberFromEnv('BENCH_ROUNDS', 7)),
    duration: numberFromEnv('BENCH_DURATION', 2),
    warmup: numberFromEnv('BENCH_WARMUP', 1),
    connections: Math.round(numberFromEnv('BENCH_CONNECTIONS', 10)),
    rate: process.env.BENCH_RATE ? Math.max(1, Math.round(numberFromEnv('BENCH_RATE'))) : undefined,
    slices: Math.round(numberFromEnv('BENCH_SLICES', 4)),
    cases: casesFilter,
    variants: variantsFilter,
    pinned: canPin()
  }
  // Only a complete run may replace bench/RESULTS.md, the table the README quotes.
  config.kind = config.rounds < 3 || config.duration < 2
    ? 'smoke'
    : casesFilter || variantsFilter || process.env.BENCH_BASELINE || config.rate !== undefined ? 'partial' : 'full'
  return config
}

function selectCases (config) {
  const matches = (filter, name, group) => !filter || filter.some(f => f === group || name.includes(f))
  const selected = CASES
    .filter(c => matches(config.cases, c.name, c.group))
    .map(c => ({ ...c, variants: c.variants.filter(v => v === FLOOR[c.group] || matches(config.variants, v)) }))
  if (selected.length === 0) throw new Error(`BENCH_CASES=${process.env.BENCH_CASES} matches no case; cases: ${CASES.map(c => c.name).join(', ')}`)
  return selected
}

/** One plain request, to check what a variant does with the case's request before loading it. */
function send (port, { method, path, headers, body }) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, res => {
      const chunks = []
      res.on('data', chunk => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }))
    })
    req.on('error', reject)
    req.setTimeout(10000, () => req.destroy(new Error('no response within 10 s')))
    req.end(body)
  })
}

// A variant that does not do its work would be measured as impossibly cheap: refuse it.
async function checkVariant (c, server) {
  const req = requestOf(c)
  if (c.group === 'body') {
    const res = await send(server.port, { ...req, path: '/check' })
    if (res.status !== 200 || res.text !== 'check ok') return `start-up check: ${res.status} ${res.text.slice(0, 300)}`
    return null
  }
  const marker = randomUUID()
  const res = await send(server.port, { ...req, path: `${req.path}&check=${marker}` })
  if (res.status !== 200) return `start-up check: ${res.status} ${res.text.slice(0, 300)}`
  const { problem } = await server.ask({ type: 'logcheck', marker }, m => m.type === 'logchecked', 10000)
  return problem ? `start-up check: ${problem}` : null
}

function loud (message) {
  const bar = '!'.repeat(78)
  console.error(`\n${bar}\n${message}\n${bar}\n`)
}

// Log files written in a window leave the page cache dirty; the kernel writes it back a few
// seconds later, in the middle of the next variant's window, which then measured up to a third
// dearer (seen as: whichever variant ran right after the floor looked cheapest). Every window
// starts with nothing left to write back.
function settleDisk () {
  spawnSync('sync', { stdio: 'ignore' })
}

async function measure (config, load, c, variant, server) {
  settleDisk()
  // a fresh process also pays for compiling the hot paths: the warm-up is twice BENCH_WARMUP
  const warm = await load.run(c, server.port, 2 * config.warmup)
  const warmProblem = loadProblem(warm)
  if (warmProblem) return { problem: `during warm-up: ${warmProblem}` }
  await server.ask({ type: 'start' }, m => m.type === 'started')
  const result = await load.run(c, server.port, config.duration)
  const window = await server.ask({ type: 'stop' }, m => m.type === 'stopped')
  const problem = loadProblem(result, window)
  if (problem) return { problem }
  return windowRun(window, [result])
}

/** The record of one measured window: what the server counted, and the load of its slices. */
function windowRun (window, results) {
  if (window.answered === 0) return { problem: 'the server answered no request in the measured window' }
  const seconds = results.reduce((n, r) => n + r.duration, 0)
  const completed = results.reduce((n, r) => n + r.completed, 0)
  return {
    run: {
      cpuUsPerReq: window.cpuUs / window.answered,
      reqPerSec: seconds > 0 ? completed / seconds : 0,
      answered: window.answered,
      cpuUs: window.cpuUs,
      serverFailures: window.failed,
      preempted: window.preempted,
      completed,
      seconds,
      slices: results.length,
      // of the slices: the median of their medians, the worst of their 99th percentiles
      latencyP50: median(results.map(r => r.latencyP50)),
      latencyP99: Math.max(...results.map(r => r.latencyP99)),
      rss: window.rss,
      heapUsed: window.heapUsed,
      heapGrowth: window.heapGrowth,
      maxRss: window.maxRss
    }
  }
}

// Work a slice's requests leave behind (responses still being written, a log batch due within
// 10 ms, connections closing) belongs to the slice: its clock stops this long after the load.
const SLICE_SETTLE_MS = 50

/**
 * One round measured in slices: every variant has its own fresh server, all of them up at
 * once (each on the same CPU, idle while another is loaded), and the variants take turns slice
 * by slice. A slow spell of the machine then falls on every variant of the round alike, where
 * whole windows one after the other could each meet a different one. Returns the runs by
 * variant; a variant that fails is marked broken and left out.
 */
async function sliceRound (config, load, c, order, round, tmpDir, servers, broken, markBroken) {
  const active = []
  for (const variant of order) {
    if (broken[variant]) continue
    if (await startChecked(config, c, variant, tmpDir, servers, markBroken)) active.push(variant)
  }
  const results = new Map(active.map(v => [v, []]))
  const fail = async (variant, problem) => {
    active.splice(active.indexOf(variant), 1)
    await markBroken(variant, `round ${round + 1}: ${problem}`)
  }
  const attempt = async (variant, step) => {
    try {
      return await step()
    } catch (err) {
      if (err instanceof LoadGeneratorError) throw err
      await fail(variant, err.message)
      return null
    }
  }
  settleDisk()
  for (const variant of [...active]) {
    const server = servers.get(variant)
    const warm = await attempt(variant, () => load.run(c, server.port, 2 * config.warmup))
    const problem = warm && loadProblem(warm)
    if (problem) await fail(variant, `during warm-up: ${problem}`)
  }
  for (const variant of [...active]) {
    await attempt(variant, () => servers.get(variant).ask({ type: 'start', paused: true }, m => m.type === 'started'))
  }
  for (let slice = 0; slice < config.slices; slice++) {
    // forwards, then backwards: within a round every variant is as often early as late
    const turn = slice % 2 === 0 ? [...active] : [...active].reverse()
    for (const variant of turn) {
      if (!active.includes(variant)) continue
      const server = servers.get(variant)
      settleDisk()
      const result = await attempt(variant, async () => {
        await server.ask({ type: 'resume' }, m => m.type === 'resumed')
        const r = await load.run(c, server.port, config.duration / config.slices)
        await new Promise(resolve => setTimeout(resolve, SLICE_SETTLE_MS))
        await server.ask({ type: 'pause' }, m => m.type === 'paused')
        return r
      })
      if (result === null) continue
      const problem = loadProblem(result)
      if (problem) { await fail(variant, problem); continue }
      results.get(variant).push(result)
    }
  }
  const runs = {}
  for (const variant of [...active]) {
    const window = await attempt(variant, () => servers.get(variant).ask({ type: 'stop' }, m => m.type === 'stopped'))
    if (window === null) continue
    const { run, problem } = windowRun(window, results.get(variant))
    if (problem) { await fail(variant, problem); continue }
    runs[variant] = run
  }
  return runs
}

/**
 * One round measured in whole windows: the variants one after the other, each with a fresh
 * server, alone on its CPU for its warm-up and window. Returns the runs by variant.
 */
async function wholeWindowRound (config, load, c, order, round, tmpDir, servers, broken, markBroken) {
  const runs = {}
  for (const variant of order) {
    if (broken[variant]) continue
    const server = await startChecked(config, c, variant, tmpDir, servers, markBroken)
    if (!server) continue
    try {
      const { run, problem } = await measure(config, load, c, variant, server)
      if (problem) {
        await markBroken(variant, `round ${round + 1}: ${problem}`)
        continue
      }
      runs[variant] = run
    } catch (err) {
      if (err instanceof LoadGeneratorError) throw err
      await markBroken(variant, `round ${round + 1}: ${err.message}`)
    } finally {
      // markBroken has already stopped a broken variant's server
      if (servers.get(variant) === server) {
        servers.delete(variant)
        await server.stop()
      }
    }
  }
  return runs
}

/**
 * A fresh server for `variant`, kept in `servers`, once it passed its start-up check; null when
 * it cannot start or fails the check, the variant then being marked broken (which stops it).
 */
async function startChecked (config, c, variant, tmpDir, servers, markBroken) {
  try {
    const server = await startServer(config, c, variant, tmpDir)
    servers.set(variant, server)
    const checked = await checkVariant(c, server)
    if (checked) {
      await markBroken(variant, checked)
      return null
    }
    return server
  } catch (err) {
    await markBroken(variant, `cannot start: ${err.message}`)
    return null
  }
}

async function runCase (config, load, c, tmpRoot) {
  const caseResult = { name: c.name, group: c.group, note: c.note, variants: c.variants, broken: {}, rounds: [] }
  if (c.group === 'body') caseResult.bodyBytes = payloadOf(c).body.length
  const tmpDir = mkdtempSync(join(tmpRoot, `${c.name}-`))
  const servers = new Map()
  const markBroken = (variant, reason) => {
    caseResult.broken[variant] = reason
    loud(`BROKEN: ${c.name} / ${variant}: ${reason}`)
    const server = servers.get(variant)
    servers.delete(variant)
    return server?.stop()
  }
  const measureRound = config.slices > 1 ? sliceRound : wholeWindowRound
  // Every round gets fresh server processes. A process kept for all rounds carried its own
  // persistent speed: with the same build loaded as three variants, the one started first
  // measured about 20 us/request and the next one 25-32 in every round. A fresh process per
  // round spreads whatever makes one process faster than another over all variants.
  try {
    for (let round = 0; round < config.rounds; round++) {
      // rotate the order so no variant always runs first, and reverse it every other round so
      // no variant always runs right after the same neighbour
      const rotated = c.variants.map((_, i) => c.variants[(i + round) % c.variants.length])
      const order = round % 2 === 1 ? rotated.reverse() : rotated
      let runs
      try {
        runs = await measureRound(config, load, c, order, round, tmpDir, servers, caseResult.broken, markBroken)
      } finally {
        await Promise.all([...servers.values()].map(s => s.stop()))
        servers.clear()
      }
      for (const variant of order) {
        const run = runs[variant]
        if (!run) continue
        console.log(`${c.name.padEnd(20)} round ${round + 1}/${config.rounds}  ${variant.padEnd(12)} ` +
          `${run.cpuUsPerReq.toFixed(1).padStart(7)} µs/req ${run.reqPerSec.toFixed(0).padStart(7)} req/s ` +
          `${String(run.preempted).padStart(5)} preempted`)
      }
      caseResult.rounds.push({ round: round + 1, order, runs })
    }
  } finally {
    rmSync(tmpDir, { recursive: true, force: true })
  }
  caseResult.summary = summarizeCase(caseResult)
  return caseResult
}

async function main () {
  const config = readConfig()
  const cases = selectCases(config)
  const runs = cases.reduce((n, c) => n + c.variants.length, 0) * config.rounds
  // each window: a fresh process and its check (about half a second), the warm-up, the window,
  // and per slice a disk sync and the settling time
  const estimate = Math.ceil(runs * (2 * config.warmup + config.duration + 0.6 + (config.slices > 1 ? 0.5 * config.slices : 0)) / 60)
  console.log(`${config.kind} run: ${cases.length} cases, ${runs} measured windows, about ${estimate} min` +
    (config.pinned ? '' : ' (no CPU pinning: taskset or a second CPU is missing)'))
  for (const c of cases) if (c.group === 'body') payloadOf(c)

  const tmpRoot = mkdtempSync(join(os.tmpdir(), 'foyer-bench-'))
  const cleanUp = () => {
    killChildren()
    rmSync(tmpRoot, { recursive: true, force: true })
  }
  process.once('SIGINT', () => { cleanUp(); process.exit(130) })

  const results = {
    machine: {
      cpu: os.cpus()[0]?.model ?? 'unknown CPU',
      cores: os.cpus().length,
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      loadAverageAtStart: os.loadavg()[0],
      date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC'
    },
    config,
    notes: Object.entries(NOTES).filter(([variant]) => cases.some(c => c.variants.includes(variant))).map(([, note]) => note),
    cases: []
  }
  let load
  try {
    load = await startLoadGenerator(config)
    for (const c of cases) results.cases.push(await runCase(config, load, c, tmpRoot))
  } finally {
    await load?.stop()
    cleanUp()
  }
  results.machine.loadAverageAtEnd = os.loadavg()[0]

  const outDir = process.env.BENCH_OUT
    ? resolve(process.env.BENCH_OUT)
    : config.kind === 'full' ? here : join(here, 'results', 'tmp')
  mkdirSync(outDir, { recursive: true })
  const table = markdown(results)
  writeFileSync(join(outDir, 'RESULTS.md'), table)
  writeFileSync(join(outDir, 'results.json'), JSON.stringify(results, null, 2) + '\n')
  console.log(`\n${table}`)
  console.log(`written: ${relative(process.cwd(), join(outDir, 'RESULTS.md'))}, ${relative(process.cwd(), join(outDir, 'results.json'))}`)

  const broken = results.cases.flatMap(c => Object.entries(c.broken).map(([v, why]) => `  ${c.name} / ${v}: ${why}`))
  if (broken.length) {
    loud(`${broken.length} broken variant(s), not measured:\n${broken.join('\n')}`)
    process.exitCode = 1
  }
}

main().catch(err => {
  console.error(err)
  process.exitCode = 1
})

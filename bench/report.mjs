// From the measured rounds to medians, ratios and the markdown table.
import { FLOOR, GROUP_VARIANTS } from './cases.mjs'

/** The `p` quantile of `values` (0 ≤ p ≤ 1), interpolating between neighbours; the median at 0.5. */
export function quantile (values, p) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (sorted.length === 0) return NaN
  const at = p * (sorted.length - 1)
  const below = Math.floor(at)
  const above = Math.min(below + 1, sorted.length - 1)
  return sorted[below] + (sorted[above] - sorted[below]) * (at - below)
}

export function median (values) {
  return quantile(values, 0.5)
}

/**
 * The summary of one case: per variant the median CPU per request and throughput, and the
 * ratio to every other variant, taken within each round (both ran minutes apart at most,
 * under the same machine noise) and then the median over the rounds, with the first and third
 * quartiles of the per-round ratios to the floor.
 */
export function summarizeCase (caseResult) {
  const { variants, rounds, group } = caseResult
  const measured = v => rounds.map(r => r.runs[v]).filter(Boolean)
  const summary = {}
  for (const v of variants) {
    const runs = measured(v)
    if (runs.length === 0) continue
    const ratios = {}
    // the middle half of the per-round ratios to the floor: how far one round's ratio may move
    let floorSpread
    for (const peer of variants) {
      if (peer === v) continue
      const perRound = rounds
        .filter(r => r.runs[v] && r.runs[peer])
        .map(r => r.runs[v].cpuUsPerReq / r.runs[peer].cpuUsPerReq)
      if (perRound.length) ratios[peer] = median(perRound)
      if (perRound.length && peer === FLOOR[group]) floorSpread = [quantile(perRound, 0.25), quantile(perRound, 0.75)]
    }
    summary[v] = {
      rounds: runs.length,
      cpuUsPerReq: median(runs.map(r => r.cpuUsPerReq)),
      reqPerSec: median(runs.map(r => r.reqPerSec)),
      ratios,
      floorSpread,
      rss: median(runs.map(r => r.rss)),
      heapUsed: median(runs.map(r => r.heapUsed)),
      // what the server holds after a full GC at the end of its window against the start of
      // it: a leak grows with the requests served, so it shows up here
      heapGrowth: median(runs.map(r => r.heapGrowth)),
      maxRss: Math.max(...runs.map(r => r.maxRss))
    }
  }
  return summary
}

const fixed = (n, digits) => Number.isFinite(n) ? n.toFixed(digits) : '—'
const mb = bytes => fixed(bytes / 1048576, 1)
const kb = bytes => Number.isFinite(bytes) ? `${bytes >= 0 ? '+' : ''}${Math.round(bytes / 1024)}` : '—'

function groupTable (group, caseResults) {
  const peers = GROUP_VARIANTS[group]
  const head = ['case', 'variant', 'CPU µs/req', 'req/s', ...peers.map(p => `× ${p}`), `× ${FLOOR[group]} q1–q3`, 'RSS MB', 'heap MB', 'heap Δ KB']
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => i < 2 ? ' --- ' : ' ---: ').join('|')}|`]
  for (const cr of caseResults) {
    for (const v of cr.variants) {
      const s = cr.summary[v]
      const broken = cr.broken[v]
      const variant = v === FLOOR[group] ? `${v} (floor)` : v
      let cells
      if (broken) {
        cells = [`**BROKEN**: ${broken.replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 160)}`, ...Array(head.length - 3).fill('')]
      } else if (!s) {
        cells = ['not measured', ...Array(head.length - 3).fill('')]
      } else {
        cells = [
          fixed(s.cpuUsPerReq, 1),
          fixed(s.reqPerSec, 0),
          ...peers.map(p => p === v ? '—' : fixed(s.ratios[p], 2)),
          s.floorSpread ? `${fixed(s.floorSpread[0], 2)}–${fixed(s.floorSpread[1], 2)}` : '—',
          mb(s.rss),
          mb(s.heapUsed),
          kb(s.heapGrowth)
        ]
      }
      lines.push(`| ${cr.name} | ${variant} | ${cells.join(' | ')} |`)
    }
  }
  return lines.join('\n')
}

export function machineLine (results) {
  const { machine: m, config: c } = results
  return `${m.cpu}, ${m.cores} cores, Node.js ${m.node}, ${m.platform}; ${m.date}; ` +
    `load average ${m.loadAverageAtStart.toFixed(2)} at the start, ${m.loadAverageAtEnd.toFixed(2)} at the end; ` +
    `${c.rounds} rounds of a fresh server process per variant, ${2 * c.warmup} s warm-up + ${c.duration} s measured per variant` +
    (c.slices > 1 ? ` in ${c.slices} slices of ${c.duration / c.slices} s, the variants of a round taking turns slice by slice` : ', one variant after the other') +
    `, ${c.connections} connections` + (c.rate ? ` sending ${c.rate} requests/s in all` : '') + '; ' +
    (c.pinned ? 'server pinned to CPU 0, autocannon to CPU 1.' : 'no CPU pinning (taskset or a second CPU missing).')
}

export function markdown (results) {
  const title = results.config.kind === 'full'
    ? '# Benchmark results'
    : `# Benchmark results: ${results.config.kind} run (not for quoting)`
  const out = [title, '', machineLine(results), '']
  out.push(
    'CPU µs/req is the server process\'s own CPU time (user + system) over the measured window divided by the ' +
    'requests it answered; × columns are that ratio against each variant, taken per round, median over the rounds; ' +
    'q1–q3 is the middle half of those per-round ratios to the floor, from the first to the third quartile: how far a single round may move. ' +
    'req/s is autocannon\'s throughput (the load generator has one CPU, so this is less steady). ' +
    'Every round starts a fresh server process per variant. Memory is measured after a full GC at the end of each window (median); heap Δ is the heap after a full GC at the end of the window against the same at its start (median).', '')
  for (const group of ['body', 'logger']) {
    const caseResults = results.cases.filter(c => c.group === group)
    if (caseResults.length === 0) continue
    out.push(`## ${group === 'body' ? 'Body parsers' : 'Loggers'}`, '', groupTable(group, caseResults), '')
    if (group === 'body') out.push(`Request bodies (bytes sent): ${caseResults.map(c => `${c.name} ${c.bodyBytes}`).join(', ')}.`, '')
  }
  const notes = [...results.notes, ...results.cases.map(c => c.note).filter(Boolean)]
  if (notes.length) out.push('Notes:', '', ...notes.map(n => `- ${n}`), '')
  return out.join('\n')
}

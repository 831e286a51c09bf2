// Many processes, one file: appended lines never tear or interleave.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'

const WORKERS = 4
const PER_WORKER = 5000

async function hammer (port: number, count: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 })
  let sent = 0
  const one = async (): Promise<void> => {
    while (sent < count) {
      const n = sent++
      await new Promise<void>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: `/w/${n}?q=${'x'.repeat(n % 97)}`, agent, headers: { 'user-agent': `ua-${n}` } }, (res) => {
          res.resume()
          res.on('end', resolve)
        })
        req.on('error', reject)
        req.end()
      })
    }
  }
  await Promise.all(Array.from({ length: 8 }, one))
  agent.destroy()
}

describe('many processes logging to one append-mode file', () => {
  it(`ends with exactly ${WORKERS * PER_WORKER} whole lines, none torn or interleaved`, { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'foyer-cluster-'))
    const file = join(dir, 'access.log')
    try {
      const primary = spawn(process.execPath, ['--import', 'tsx', 'test/hostile/fixtures/cluster-logger.ts'], {
        env: { ...process.env, LOG_FILE: file, WORKERS: String(WORKERS) },
        stdio: ['pipe', 'pipe', 'inherit']
      })
      const exited = new Promise<number | null>((resolve) => primary.on('exit', resolve))
      const ports = await new Promise<number[]>((resolve, reject) => {
        let out = ''
        primary.stdout.on('data', (c: Buffer) => {
          out += c.toString()
          const line = out.split('\n').find((l) => l.startsWith('{'))
          if (line !== undefined) resolve((JSON.parse(line) as { ports: number[] }).ports)
        })
        primary.on('exit', () => { reject(new Error(`primary exited early: ${out}`)) })
      })
      assert.equal(ports.length, WORKERS)
      await Promise.all(ports.map(async (port) => { await hammer(port, PER_WORKER) }))
      primary.stdin.end()
      assert.equal(await exited, 0)

      const text = readFileSync(file, 'utf8')
      assert.ok(text.endsWith('\n'), 'the file ends with a whole line')
      const lines = text.slice(0, -1).split('\n')
      assert.equal(lines.length, WORKERS * PER_WORKER)
      const shape = /^127\.0\.0\.1 - - \[\d{2}\/\w{3}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000\] "GET \/w\/(\d+)\?q=(x*) HTTP\/1\.1" 200 - "-" "ua-(\d+)"$/
      const seen = new Map<string, number>()
      for (const line of lines) {
        const m = shape.exec(line)
        assert.ok(m !== null, `a whole, well-formed line: ${JSON.stringify(line)}`)
        assert.equal(m[3], m[1], 'one request per line')
        assert.equal(m[2]?.length, Number(m[1]) % 97)
        seen.set(m[1] ?? '', (seen.get(m[1] ?? '') ?? 0) + 1)
      }
      // every worker logged requests 0..PER_WORKER-1 once
      assert.equal(seen.size, PER_WORKER)
      for (const count of seen.values()) assert.equal(count, WORKERS)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

// Runs every test file under test/ with node:test. Node 20 takes file paths, not globs, after
// --test, so the files are listed here. `TEST_NODE` picks another Node.js binary (CI runs 20.11, 22, 24 and 26).
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

function find (dir) {
  const out = []
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out.push(...find(path))
    else if (name.endsWith('.test.ts')) out.push(path)
  }
  return out
}

const only = process.argv.slice(2)
const files = only.length > 0 ? only : find('test')
const node = process.env.TEST_NODE ?? process.execPath
// A test that hangs (a promise nothing settles, with a handle keeping the loop alive) would hold
// the run forever: past this bound the run is stopped and fails. The whole suite takes a minute or two.
const LIMIT_MINUTES = 15
const result = spawnSync(node, ['--import', 'tsx', '--test', ...files], { stdio: 'inherit', timeout: LIMIT_MINUTES * 60_000 })
if (result.error?.code === 'ETIMEDOUT') console.error(`the test run was stopped: it did not finish within ${LIMIT_MINUTES} minutes`)
else if (result.error !== undefined) console.error(`the test run could not start: ${result.error.message}`)
else if (result.signal !== null) console.error(`the test runner was ended by ${result.signal}`)
process.exit(result.status ?? 1)

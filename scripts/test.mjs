// Runs every test file under test/ with node:test. Node 20 takes file paths, not globs, after
// --test, so the files are listed here. `TEST_NODE` picks another Node.js binary (CI runs 22 and 24).
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
const result = spawnSync(node, ['--import', 'tsx', '--test', ...files], { stdio: 'inherit' })
process.exit(result.status ?? 1)

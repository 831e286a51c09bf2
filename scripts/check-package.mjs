// Checks the package as users receive it: packs the tarball, runs attw and publint against it,
// then installs it into a scratch consumer and loads every entry point from CommonJS and ESM,
// and type-checks consumers of both kinds. Run after `npm run build`.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, cpSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const bin = (name) => join(root, 'node_modules', '.bin', name)
const run = (cmd, args, cwd = root) => {
  console.log(`$ ${[cmd, ...args].join(' ')}`)
  execFileSync(cmd, args, { cwd, stdio: 'inherit' })
}

const packDir = mkdtempSync(join(tmpdir(), 'foyer-pack-'))
// The consumer lives under node_modules so the installed copy resolves its own dependencies
// from this checkout's node_modules, without a registry.
const consumer = join(root, 'node_modules', '.foyer-consumer')
try {
  run('npm', ['pack', '--silent', '--pack-destination', packDir])
  const tarball = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.tgz')))

  run(bin('attw'), [tarball])
  run(bin('publint'), ['run', tarball, '--strict'])

  rmSync(consumer, { recursive: true, force: true })
  const installed = join(consumer, 'node_modules', 'foyer')
  mkdirSync(installed, { recursive: true })
  run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'])
  cpSync(join(root, 'test', 'package', 'consumer'), consumer, { recursive: true })
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'commonjs' }))
  run(process.execPath, ['require.cjs'], consumer)
  run(process.execPath, ['import.mjs'], consumer)
  run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], consumer)
  console.log('package check: ok')
} finally {
  rmSync(packDir, { recursive: true, force: true })
  rmSync(consumer, { recursive: true, force: true })
}

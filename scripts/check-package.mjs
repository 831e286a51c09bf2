// Checks the package as users receive it: packs the tarball from a tree without a build, as a
// clean checkout or a git dependency is (the package's `prepare` script builds it), runs attw and
// publint against it, then installs it into a scratch consumer and loads every entry point from
// CommonJS and ESM, and type-checks consumers of both kinds, with this repository's TypeScript
// and with the oldest one the README names.
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const bin = (name) => join(root, 'node_modules', '.bin', name)
const run = (cmd, args, cwd = root) => {
  console.log(`$ ${[cmd, ...args].join(' ')}`)
  execFileSync(cmd, args, { cwd, stdio: 'inherit' })
}

// What a user's `npm install foyer` (with @types/node and typescript) gives, and nothing more:
// a declaration that imports from one of this repository's devDependencies fails the type check.
const USER_PACKAGES = ['@types/node', 'typescript']
// The oldest TypeScript the declarations support. It is installed here, into a folder git ignores,
// rather than as a devDependency: its `tsc` would take the place of the current one in
// node_modules/.bin.
const OLDEST_TYPESCRIPT = '5.0.4'

const packDir = mkdtempSync(join(tmpdir(), 'foyer-pack-'))
// The consumer lives outside this checkout, so nothing resolves from its node_modules by
// accident. The packages a user would get are linked from it instead, which needs no registry;
// their own dependencies resolve from where the links point.
const consumer = mkdtempSync(join(tmpdir(), 'foyer-consumer-'))
try {
  rmSync(join(root, 'dist'), { recursive: true, force: true })
  run('npm', ['pack', '--silent', '--pack-destination', packDir])
  const tarball = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.tgz')))

  run(bin('attw'), [tarball])
  run(bin('publint'), ['run', tarball, '--strict'])

  const modules = join(consumer, 'node_modules')
  const installed = join(modules, 'foyer')
  mkdirSync(installed, { recursive: true })
  run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'])
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
  for (const name of [...Object.keys(manifest.dependencies ?? {}), ...USER_PACKAGES]) {
    const link = join(modules, name)
    mkdirSync(dirname(link), { recursive: true })
    symlinkSync(join(root, 'node_modules', name), link, 'junction')
  }
  cpSync(join(root, 'test', 'package', 'consumer'), consumer, { recursive: true })
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'commonjs' }))
  run(process.execPath, ['require.cjs'], consumer)
  run(process.execPath, ['import.mjs'], consumer)
  // With the 'import' condition, require() loads the ESM entries (require(esm)) and must give the
  // same shapes: `require('foyer/logger')` is still the logger function itself.
  if (process.features.require_module === true) run(process.execPath, ['--conditions=import', 'require.cjs'], consumer)
  // nodenext (.cts and .mts), bundlers, and CommonJS output with node10 resolution and esModuleInterop;
  // then declarations emitted for middleware made with foyer, with nodenext and node10 resolution
  for (const config of ['tsconfig.json', 'tsconfig.bundler.json', 'tsconfig.node10.json', 'tsconfig.declarations.json', 'tsconfig.declarations-node10.json']) {
    run(process.execPath, [join(modules, 'typescript', 'bin', 'tsc'), '-p', config], consumer)
  }
  const oldest = join(root, '.cache', `typescript-${OLDEST_TYPESCRIPT}`)
  const oldestTsc = join(oldest, 'node_modules', 'typescript', 'bin', 'tsc')
  if (!existsSync(oldestTsc)) {
    run('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--no-package-lock', '--prefix', oldest, `typescript@${OLDEST_TYPESCRIPT}`])
  }
  run(process.execPath, [oldestTsc, '-p', 'tsconfig.json'], consumer)
  console.log('package check: ok')
} finally {
  rmSync(packDir, { recursive: true, force: true })
  rmSync(consumer, { recursive: true, force: true })
}

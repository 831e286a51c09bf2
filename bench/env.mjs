// The knobs of the benchmark scripts, read from environment variables.

/** A positive number from the environment variable `name`, or `fallback` when it is unset or empty. */
export function numberFromEnv (name, fallback) {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!(n > 0)) throw new TypeError(`${name} must be a positive number, got ${JSON.stringify(raw)}`)
  return n
}

/** A comma list from the environment variable `name`, or null when it is unset or empty. */
export function listFromEnv (name) {
  const raw = process.env[name]
  return raw ? raw.split(',').map(s => s.trim()).filter(Boolean) : null
}

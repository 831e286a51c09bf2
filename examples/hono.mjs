// foyer's readers with Hono on Node.js: a Fetch `Request` read with the middleware's limits,
// inflation, charsets and errors.
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { readJson, readText } from 'foyer'

const app = new Hono()

app.post('/items', async (c) => {
  // undefined when there is no body or another type; the value comes from the client: check it
  const item = await readJson(c.req.raw, { limit: '1mb' })
  return c.json({ item: item ?? null })
})
app.post('/notes', async (c) => c.json({ note: await readText(c.req.raw) ?? null }))

// Parser errors carry an HTTP status and a machine-readable `type`.
app.onError((err, c) => c.json({ type: err.type ?? 'internal' }, err.status ?? 500))

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' }, (info) => {
  console.log(`listening on http://127.0.0.1:${info.port}`)
})

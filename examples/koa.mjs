// foyer's readers with Koa: await the body of `ctx.req` where a route needs it.
import Koa from 'koa'
import { readJson, readUrlencoded } from 'foyer'

const app = new Koa()

// Parser errors carry an HTTP status and a machine-readable `type`.
app.use(async (ctx, next) => {
  try {
    await next()
  } catch (err) {
    ctx.status = err.status ?? 500
    ctx.body = { type: err.type ?? 'internal' }
  }
})

app.use(async (ctx) => {
  if (ctx.method !== 'POST') {
    ctx.status = 405
    return
  }
  // undefined when there is no body or another type; the value comes from the client: check it
  const body = await readJson(ctx.req, { limit: '1mb' }) ?? await readUrlencoded(ctx.req, { extended: true })
  ctx.body = { received: body ?? null }
})

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`)
})

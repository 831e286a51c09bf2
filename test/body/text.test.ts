import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import bodyParser from 'body-parser'
import iconv from 'iconv-lite'
import { text } from '../../src/body/index.js'
import { compare, send, startBodyServer } from '../helpers/body-server.js'
import type { BodyServer } from '../helpers/body-server.js'

let server: BodyServer
before(async () => { server = await startBodyServer() })
after(async () => { await server.close() })

describe('text()', () => {
  it('reads a text/plain body into req.body as a string', async () => {
    const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': 'text/plain' }, body: 'user is tobi' })
    assert.equal(seen.body, 'user is tobi')
  })

  it('gives \'\' for an empty body', async () => {
    const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': 'text/plain' }, body: '' })
    assert.equal(seen.body, '')
  })

  it('skips other types by default', async () => {
    const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': 'text/html' }, body: '<p>' })
    assert.deepEqual(seen.body, { undefined: true })
  })

  it('takes other types with the type option', async () => {
    for (const type of ['text/html', 'text/*', ['text/html', 'text/csv'], 'html']) {
      const seen = await compare(server, text({ type }), bodyParser.text({ type: type as string }), { headers: { 'content-type': 'text/html; charset=utf-8' }, body: '<p>hi</p>' })
      assert.equal(seen.body, '<p>hi</p>')
    }
  })

  it('keeps the text exactly: no trimming, line ends as sent', async () => {
    const body = '  line one\r\nline two\n\ttabbed  '
    const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': 'text/plain' }, body })
    assert.equal(seen.body, body)
  })
})

describe('text() charset', () => {
  const samples: Array<[string, string]> = [
    ['utf-8', 'café € 日本'], ['utf-16le', 'café € 日本'], ['latin1', 'café'], ['iso-8859-1', 'café'],
    ['windows-1252', 'café €'], ['koi8-r', 'привет'], ['shift_jis', '日本語'], ['gb18030', '中文']
  ]
  for (const [charset, original] of samples) {
    it(`decodes ${charset} bodies`, async () => {
      const body = iconv.encode(original, charset)
      const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': `text/plain; charset=${charset}` }, body })
      assert.equal(seen.body, original)
    })
  }

  it('drops a byte order mark, as iconv-lite does', async () => {
    for (const [charset, bom] of [['utf-8', [0xef, 0xbb, 0xbf]], ['utf-16le', [0xff, 0xfe]]] as const) {
      const body = Buffer.concat([Buffer.from(bom), iconv.encode('hi', charset)])
      const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': `text/plain; charset=${charset}` }, body })
      assert.equal(seen.body, 'hi')
    }
  })

  it('reads the charset parameter in any case and quoted', async () => {
    const body = iconv.encode('café', 'latin1')
    for (const type of ['text/plain; charset=LATIN1', 'text/plain; Charset="latin1"', 'text/plain;charset=latin1;format=flowed']) {
      const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': type }, body })
      assert.equal(seen.body, 'café')
    }
  })

  it('uses defaultCharset when Content-Type names none', async () => {
    const body = iconv.encode('café', 'latin1')
    const seen = await compare(server, text({ defaultCharset: 'latin1' }), bodyParser.text({ defaultCharset: 'latin1' }), { headers: { 'content-type': 'text/plain' }, body })
    assert.equal(seen.body, 'café')
  })

  it('defaults to utf-8', async () => {
    const seen = await send(server, server.mount(text()), { headers: { 'content-type': 'text/plain' }, body: Buffer.from('café', 'utf8') })
    assert.equal(seen.body, 'café')
  })

  for (const charset of ['bogus', '__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    it(`415 charset.unsupported for charset=${charset}`, async () => {
      const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': `text/plain; charset=${charset}` }, body: 'x' })
      assert.equal(seen.error?.status, 415)
      assert.equal(seen.error?.type, 'charset.unsupported')
      assert.equal(seen.error?.message, `unsupported charset "${charset.toUpperCase()}"`)
      assert.deepEqual(seen.error?.props, { charset: charset.toLowerCase() })
    })
  }

  it('415 for an unknown defaultCharset, named in lower case', async () => {
    const seen = await compare(server, text({ defaultCharset: 'Bogus' }), bodyParser.text({ defaultCharset: 'Bogus' }), { headers: { 'content-type': 'text/plain' }, body: 'x' })
    assert.deepEqual(seen.error?.props, { charset: 'bogus' })
    assert.equal(seen.error?.message, 'unsupported charset "BOGUS"')
  })
})

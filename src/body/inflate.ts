// Content-Encoding -> the decompression stream for it.
import zlib from 'node:zlib'
import type { Transform } from 'node:stream'
import type { BodyHeaders } from './read.js'

/** Creates a fresh decompression stream. */
export type InflaterFactory = () => Transform

// zstd arrived in zlib with Node.js 22.15 (and 23.8); older versions answer it with a 415.
const createZstd = (zlib as { createZstdDecompress?: () => Transform }).createZstdDecompress

const inflaters = new Map<string, InflaterFactory>([
  ['gzip', () => zlib.createGunzip()],
  // RFC 9110 8.4.1.3: a recipient should treat x-gzip as gzip
  ['x-gzip', () => zlib.createGunzip()],
  ['deflate', () => zlib.createInflate()],
  ['br', () => zlib.createBrotliDecompress()]
])
if (createZstd !== undefined) inflaters.set('zstd', () => createZstd())

/**
 * The request's Content-Encoding, lower case, `identity` when absent or empty. Like body-parser it is
 * not split or trimmed: a stacked `gzip, gzip` is one unknown encoding.
 */
export function contentEncoding (headers: BodyHeaders): string {
  const header = headers['content-encoding']
  return header === undefined || header === '' ? 'identity' : header.toLowerCase()
}

/** The decompressor for an encoding other than `identity`, or undefined when there is none. */
export function inflaterFor (encoding: string): InflaterFactory | undefined {
  return inflaters.get(encoding)
}

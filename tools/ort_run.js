#!/usr/bin/env node
// Reference runner for onnxcc's tests: runs MODEL.onnx with ONNX Runtime.
//
//   node tools/ort_run.js MODEL.onnx INPUT.npy... -o OUTDIR [--bench N] [--threads N]
//   node tools/ort_run.js --serve [--threads N]     (jobs on stdin: see serve())
// --opt disabled|basic|extended|all: ORT's graph optimization level (default
// all; tests/difftest takes basic: ORT's extended fusions once made an
// invalid graph of a valid model)
//
// The .npy files feed the graph inputs in graph-input order; OUTDIR/output_K.npy
// gets graph output K. One thread (intra and inter op) unless --threads N,
// all graph optimizations, sequential execution.
// --bench N runs a warm-up, then N timed runs, and prints
// `bench: runs=N median_ms=X min_ms=Y` (the harness's format). --threads N
// sets ORT's intra-op threads (default 1; inter-op stays 1): bench/zoo_bench.sh
// runs it with the count onnxcc's `net --threads N` gets.
// Needs `ONNXRUNTIME_NODE_INSTALL=skip npm ci` in tools/ (tools/node_modules).
// The .npy reader/writer below handles little-endian, C-order arrays only and
// says so for anything else rather than guess.
'use strict';

const fs = require('fs');
const path = require('path');

// numpy descr <-> ORT tensor type <-> typed array. bool is numpy '|b1'
// (one byte 0/1), which is how ORT holds it too.
const DTYPES = [
  { descr: '<f4', ort: 'float32', Arr: Float32Array },
  { descr: '<f8', ort: 'float64', Arr: Float64Array },
  { descr: '<f2', ort: 'float16', Arr: Uint16Array },
  { descr: '<i8', ort: 'int64', Arr: BigInt64Array },
  { descr: '<i4', ort: 'int32', Arr: Int32Array },
  { descr: '<i2', ort: 'int16', Arr: Int16Array },
  { descr: '|i1', ort: 'int8', Arr: Int8Array },
  { descr: '<u8', ort: 'uint64', Arr: BigUint64Array },
  { descr: '<u4', ort: 'uint32', Arr: Uint32Array },
  { descr: '<u2', ort: 'uint16', Arr: Uint16Array },
  { descr: '|u1', ort: 'uint8', Arr: Uint8Array },
  { descr: '|b1', ort: 'bool', Arr: Uint8Array },
];

function die(msg) {
  process.stderr.write('ort_run: ' + msg + '\n');
  process.exit(2);
}

// in --serve mode a bad job is that job's error, not the server's end
class JobError extends Error {}
let serving = false;
function fail(msg) {
  if (serving) throw new JobError(msg);
  die(msg);
}

// numpy writes '<i1'/'<u1'/'<b1' on some versions and '|i1' on others.
function findDescr(descr) {
  const norm = descr.length === 3 && descr[2] === '1' ? '|' + descr.slice(1) : descr;
  return DTYPES.find((d) => d.descr === norm);
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') fail(file + ': not a .npy file');
  const major = buf[6];
  let hlen, hstart;
  if (major === 1) { hlen = buf.readUInt16LE(8); hstart = 10; }
  else if (major === 2 || major === 3) { hlen = buf.readUInt32LE(8); hstart = 12; }
  else fail(file + ': unsupported .npy version ' + major);
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']*)'/.exec(header);
  const fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) fail(file + ': cannot parse header ' + JSON.stringify(header));
  if (fortran[1] === 'True') fail(file + ': fortran_order arrays are not supported');
  const dt = findDescr(descr[1]);
  if (!dt) fail(file + ': unsupported dtype ' + descr[1] + ' (little-endian numeric or bool only)');
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const off = hstart + hlen;
  const nbytes = count * dt.Arr.BYTES_PER_ELEMENT;
  if (buf.length - off < nbytes) fail(file + ': truncated data (' + (buf.length - off) + ' of ' + nbytes + ' bytes)');
  // Copy into a fresh buffer: the data offset need not be aligned for 8-byte types.
  const data = new dt.Arr(buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + off + nbytes));
  return { dt, dims, data };
}

function writeNpy(file, dt, dims, data) {
  const shape = dims.length === 1 ? '(' + dims[0] + ',)' : '(' + dims.join(', ') + ')';
  let header = "{'descr': '" + dt.descr + "', 'fortran_order': False, 'shape': " + shape + ', }';
  // numpy pads the header with spaces and a newline so the data starts on a
  // 64-byte boundary (magic 6 + version 2 + length 2 + header).
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

function parseArgs(argv) {
  const a = { model: null, inputs: [], outdir: null, bench: 0, threads: 1, serve: false, opt: 'all' };
  for (let i = 0; i < argv.length; i++) {
    const s = argv[i];
    if (s === '-o') a.outdir = argv[++i];
    else if (s === '--bench') a.bench = parseInt(argv[++i], 10);
    else if (s === '--threads') a.threads = parseInt(argv[++i], 10);
    else if (s === '--serve') a.serve = true;
    else if (s === '--opt') a.opt = argv[++i];
    else if (s === '-h' || s === '--help') {
      process.stdout.write('usage: ort_run.js MODEL.onnx INPUT.npy... -o OUTDIR [--bench N] [--threads N]\n');
      process.exit(0);
    } else if (s.startsWith('-')) die('unknown option ' + s);
    else if (!a.model) a.model = s;
    else a.inputs.push(s);
  }
  if (a.serve) return a;
  if (!a.model) die('usage: ort_run.js MODEL.onnx INPUT.npy... -o OUTDIR [--bench N] [--threads N]');
  if (!a.outdir && !a.bench) die('-o OUTDIR is required (or --bench N)');
  if (!(a.bench >= 0)) die('--bench needs a run count');
  if (!(a.threads >= 1)) die('--threads needs a positive count');
  return a;
}

function median(xs) {
  const s = xs.slice().sort((p, q) => p - q);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// --serve: one job a line on stdin, {"model": M, "inputs": [NPY...], "outdir": D}
// (the model's outputs written as by one run), answered by a line
// {"ok": true} or {"error": "..."} on stdout; the sessions of the last models
// kept. For many runs without a Node.js start each (tests/difftest).
async function serve(ort, a) {
  serving = true;
  const cache = new Map();
  const rl = require('readline').createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (!line.trim()) continue;
    let reply;
    try {
      const job = JSON.parse(line);
      // (a file written again at the same path is another model)
      const st = fs.statSync(job.model);
      const key = job.model + ' ' + st.mtimeMs + ' ' + st.size;
      let sess = cache.get(key);
      if (!sess) {
        sess = await ort.InferenceSession.create(job.model, {
          intraOpNumThreads: a.threads, interOpNumThreads: 1, executionMode: 'sequential',
          graphOptimizationLevel: a.opt, logSeverityLevel: 3,
        });
        if (cache.size >= 8) cache.delete(cache.keys().next().value);
        cache.set(key, sess);
      }
      await runOnce(ort, sess, job.model, job.inputs, job.outdir);
      reply = { ok: true };
    } catch (e) {
      reply = { error: e && e.message ? e.message : String(e) };
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  }
}

// feeds from the .npy files, one run, the outputs to outdir; the feeds
async function runOnce(ort, sess, model, inputs, outdir) {
  if (inputs.length !== sess.inputNames.length) {
    fail(model + ' has ' + sess.inputNames.length + ' input(s) (' + sess.inputNames.join(', ') +
         '), got ' + inputs.length + ' .npy file(s)');
  }
  const feeds = {};
  sess.inputNames.forEach((name, k) => {
    const x = readNpy(inputs[k]);
    feeds[name] = new ort.Tensor(x.dt.ort, x.data, x.dims);
  });
  const res = await sess.run(feeds);
  if (outdir) {
    fs.mkdirSync(outdir, { recursive: true });
    sess.outputNames.forEach((name, k) => {
      const t = res[name];
      const dt = DTYPES.find((d) => d.ort === t.type);
      if (!dt) fail('output ' + k + " ('" + name + "') has type " + t.type + ', which .npy writing does not support');
      writeNpy(path.join(outdir, 'output_' + k + '.npy'), dt, t.dims, t.data);
    });
  }
  return feeds;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    die('cannot load onnxruntime-node (run `ONNXRUNTIME_NODE_INSTALL=skip npm ci` in tools/): ' + e.message);
  }
  if (a.serve) return serve(ort, a);
  const sess = await ort.InferenceSession.create(a.model, {
    intraOpNumThreads: a.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: a.opt,
  });
  const feeds = await runOnce(ort, sess, a.model, a.inputs, a.outdir);

  if (a.bench > 0) {
    // Warm-up: a few runs or ~0.2 s, whichever ends first after at least one.
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 5; i++) {
      await sess.run(feeds);
      if (Number(process.hrtime.bigint() - t0) > 2e8) break;
    }
    const ms = [];
    for (let i = 0; i < a.bench; i++) {
      const s = process.hrtime.bigint();
      await sess.run(feeds);
      ms.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
    process.stdout.write('bench: runs=' + a.bench + ' median_ms=' + median(ms).toFixed(4) +
                         ' min_ms=' + Math.min(...ms).toFixed(4) + '\n');
  }
}

main().catch((e) => die(e && e.message ? e.message : String(e)));

#!/usr/bin/env node
// generate_ort.js: generate.c's greedy loop against ONNX Runtime (npm,
// tools/node_modules), for the comparison: the same ids, and its tokens a
// second.
//
//   node examples/generate/generate_ort.js [--threads T] [-w W] [--cache DIMS] decoder.onnx N ID...
// (--threads: ONNX Runtime's intra-op threads, default 1; -w: W untimed
// runs of the whole loop first, as generate.c's)
// (--cache: a cache input's shape with its past 0, default make_decoder.py's
// 2x1x4x0x16, for the first step's empty past; the caches are the inputs
// after input_ids and position_ids, the presents the outputs after logits,
// in the same order)
'use strict';
const path = require('path');
const ort = require(path.join(__dirname, '..', '..', 'tools', 'node_modules', 'onnxruntime-node'));

async function decode(sess, pasts, presents, empty, prompt, steps) {
  let ids = prompt.map((x) => BigInt(x)), past = 0, kv = null, out = [];
  let tp = 0, td = 0;
  for (let s = 0; s < steps; s++) {
    const seq = ids.length;
    const feeds = { input_ids: new ort.Tensor('int64', BigInt64Array.from(ids), [1, seq]) };
    if (sess.inputNames[1] === 'attention_mask')
      feeds.attention_mask = new ort.Tensor('int64', new BigInt64Array(past + seq).fill(1n), [1, past + seq]);
    else
      feeds.position_ids = new ort.Tensor('int64', BigInt64Array.from(ids.map((_, i) => BigInt(past + i))), [1, seq]);
    pasts.forEach((name, l) => {
      feeds[name] = kv ? kv[l] : new ort.Tensor('float32', new Float32Array(0), empty);
    });
    const t0 = process.hrtime.bigint();
    const r = await sess.run(feeds);
    const dt = Number(process.hrtime.bigint() - t0) / 1e9;
    if (s) td += dt; else tp += dt;
    const logits = r.logits.data, vocab = r.logits.dims[2];
    let best = 0;
    for (let v = 1; v < vocab; v++) if (logits[(seq - 1) * vocab + v] > logits[(seq - 1) * vocab + best]) best = v;
    out.push(best);
    kv = presents.map((name) => r[name]);
    past += seq;
    ids = [BigInt(best)];
  }
  return [out, tp, td];
}

async function main() {
  let args = process.argv.slice(2), empty = [2, 1, 4, 0, 16], threads = 1, warm = 0;
  for (;;) {
    if (args[0] === '--threads') threads = Number(args[1]);
    else if (args[0] === '-w') warm = Number(args[1]);
    else if (args[0] === '--cache') empty = args[1].split('x').map(Number);
    else break;
    args = args.slice(2);
  }
  const [model, n, ...prompt] = args;
  const steps = Number(n);
  const sess = await ort.InferenceSession.create(model, { intraOpNumThreads: threads, interOpNumThreads: 1 });
  const pasts = sess.inputNames.slice(2), presents = sess.outputNames.slice(1);
  let out, tp, td;
  for (let r = 0; r <= warm; r++) /* (the last of warm + 1 runs of the loop timed) */
    [out, tp, td] = await decode(sess, pasts, presents, empty, prompt, steps);
  console.log(out.join(' '));
  console.error(`generate_ort: prefill ${prompt.length} tokens in ${(tp * 1e3).toFixed(3)} ms, decode ${steps - 1} tokens in ${(td * 1e3).toFixed(3)} ms (${((steps - 1) / td).toFixed(0)} tokens/s)`);
}
main().catch((e) => { console.error('generate_ort: ' + e.message); process.exit(1); });

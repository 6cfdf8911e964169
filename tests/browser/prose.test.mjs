// The lesson's live sentence on T5's last bucket (web/page/prose.js, "t5-last"): where the last bucket
// starts, found by a binary search over the package's t5Bucket, against a scan of every distance
// 1 … reach done here, for the encoder and the decoder, at bucket counts and max distances across
// the controls' ranges; and the page's T5 rule (t5Rule, web/views/shared/schemes.js) against the
// package's own check. Node runs the page modules on a stand-in element (they hold no other DOM code).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from 'posenc';
import { updateProse } from '../../web/page/prose.js';
import { t5Rule } from '../../web/views/shared/schemes.js';

const pe = await init();

function sentence(st) {
  const el = { dataset: { live: 't5-last' }, textContent: '', hidden: false };
  updateProse({ querySelectorAll: () => [el] }, { pe, st, extras: {} });
  return el.textContent;
}

// The first distance whose bucket is the last, by looking at every one.
function scan(buckets, maxDistance, bidirectional) {
  const reach = Math.min(4 * maxDistance, 1 << 20);
  const ds = Float64Array.from({ length: reach }, (_, i) => (bidirectional ? i + 1 : -(i + 1)));
  const i = pe.t5Bucket(ds, { bidirectional, numBuckets: buckets, maxDistance }).indexOf(buckets - 1);
  return i < 0 ? '—' : (i + 1).toLocaleString('en-US');
}

test('t5-last: the first distance in the last bucket, as a scan of every distance finds it', () => {
  let dashes = 0;
  for (const buckets of [4, 7, 32, 100, 1024]) {
    for (const maxDistance of [2000, 9, 128, 4096, 65536, 1000000]) {
      if (maxDistance <= buckets / 2) continue;  // t5Bucket's rule: past the exact range
      const [enc, dec] = [scan(buckets, maxDistance, true), scan(buckets, maxDistance, false)];
      dashes += (enc === '—') + (dec === '—');
      assert.equal(sentence({ t5Buckets: buckets, t5MaxDist: maxDistance }),
        `with ${buckets} buckets and max distance ${maxDistance.toLocaleString('en-US')}, from ${enc} for the encoder and ${dec} for the decoder`);
    }
  }
  assert.ok(dashes > 0, 'no case without a last bucket in reach');
});

test('t5Rule refuses exactly the buckets and max distances the package refuses, and the sentence says so', () => {
  let refused = 0;
  for (const t5Buckets of [4, 5, 7, 32, 33, 1024]) {
    for (const t5MaxDist of [1, 2, 3, 8, 16, 17, 128, 256, 257, 512, 513]) {
      for (const bidirectional of [false, true]) {
        let throws = false;
        try { pe.t5Bucket([1], { numBuckets: t5Buckets, maxDistance: t5MaxDist, bidirectional }); } catch { throws = true; }
        const rule = t5Rule({ t5Buckets, t5MaxDist }, bidirectional);
        assert.equal(rule !== '', throws, `${t5Buckets} buckets, max distance ${t5MaxDist}, bidirectional ${bidirectional}: ${rule}`);
        refused += throws;
      }
    }
  }
  assert.ok(refused > 10);
  assert.equal(sentence({ t5Buckets: 1024, t5MaxDist: 128 }), 'with 1024 buckets and max distance 128, which T5 refuses: '
    + 'max distance must be more than 512 (256 for the encoder), the distances that get a bucket each');
});

// Independent check of a directory of WARC files written by freshd, with
// warcio.js (the version pinned in package-lock.json):
//   1. warcio's CDXIndexer indexes every *.warc.gz; its CDXJ must equal,
//      line for line, the <name>.cdxj freshd wrote beside the file;
//   2. every record's WARC-Block-Digest and every response's
//      WARC-Payload-Digest is recomputed (SHA-1, RFC 4648 base32);
//   3. replay: every capture is looked up as a replay tool would (URL +
//      time -> the CDXJ line -> the record at its offset); a revisit is
//      resolved through WARC-Refers-To-Target-URI + -Date to a response
//      whose payload has the revisit's digest.
// Prints one JSON summary line; exit 0 when nothing was wrong, 1 otherwise.
// Usage: node check.mjs WARC_DIR

import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { CDXIndexer, WARCParser } from "warcio";

function base32(bytes) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const b of bytes) {
    buffer = ((buffer << 8) | b) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(buffer << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += "=";
  return out;
}

function sha1(bytes) {
  return "sha1:" + base32(crypto.createHash("sha1").update(bytes).digest());
}

function headEnd(bytes) {
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 &&
        bytes[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}

// The record at `offset` (its gzip member of `length` bytes) of `file`.
async function recordAt(file, offset, length, parseHttp) {
  const stream = fs.createReadStream(file, {
    start: offset,
    end: offset + length - 1,
  });
  for await (const record of new WARCParser(stream, { parseHttp })) {
    return { record, block: await record.readFully() };
  }
  return null;
}

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node check.mjs WARC_DIR");
  process.exit(2);
}
const problems = [];
const summary = {
  warcio: JSON.parse(fs.readFileSync(new URL(
      "./node_modules/warcio/package.json", import.meta.url))).version,
  files: 0,
  records: 0,
  cdxj_lines: 0,
  block_digests: 0,
  payload_digests: 0,
  responses: 0,
  revisits: 0,
  revisits_resolved: 0,
  status: {},
  robots: 0,
  lookups: 0,
  same_second_captures: 0,
  fetched_revisited_changed: 0,
};

const files = fs.readdirSync(dir).filter((n) => n.endsWith(".warc.gz")).sort();
const captures = new Map();  // url -> [{ts, cdx, file}]
for (const name of files) {
  const file = path.join(dir, name);
  summary.files++;
  // 1. warcio's CDXJ against freshd's.
  const indexer = new CDXIndexer({ format: "cdxj" });
  const theirs = [];
  for await (const entry of indexer.iterIndex(
      [{ reader: fs.createReadStream(file), filename: name }])) {
    theirs.push(indexer.serialize(entry).trimEnd());
  }
  theirs.sort();
  const oursPath = path.join(dir, name.replace(/\.warc\.gz$/, ".cdxj"));
  if (!fs.existsSync(oursPath)) {
    problems.push(`${name}: no ${path.basename(oursPath)} beside it`);
  } else {
    const ours = fs.readFileSync(oursPath, "utf8").split("\n").filter(Boolean);
    if (ours.length !== theirs.length) {
      problems.push(`${name}: freshd's CDXJ has ${ours.length} lines, ` +
                    `warcio's ${theirs.length}`);
    }
    for (let i = 0; i < Math.min(ours.length, theirs.length); i++) {
      if (ours[i] !== theirs[i]) {
        problems.push(`${name}: CDXJ line ${i} differs:\n  freshd ${ours[i]}` +
                      `\n  warcio ${theirs[i]}`);
        break;
      }
    }
  }
  for (const line of theirs) {
    const [, , ts, json] = line.match(/^(\S+) (\d{14}) (\{.*\})$/) || [];
    if (!json) {
      problems.push(`${name}: bad CDXJ line ${line}`);
      continue;
    }
    const cdx = JSON.parse(json);
    summary.cdxj_lines++;
    if (typeof cdx.url !== "string") {
      problems.push(`${name}: CDXJ line without a url: ${line}`);
      continue;
    }
    const klass = (cdx.status || "none")[0] + "xx";
    summary.status[klass] = (summary.status[klass] || 0) + 1;
    if (cdx.url.endsWith("/robots.txt")) summary.robots++;
    if (!captures.has(cdx.url)) captures.set(cdx.url, []);
    captures.get(cdx.url).push({ ts, cdx, file });
  }
  // 2. Digests, recomputed from the blocks warcio reads.
  for await (const record of new WARCParser(fs.createReadStream(file),
                                            { parseHttp: false })) {
    const block = await record.readFully();
    summary.records++;
    const type = record.warcType;
    const id = record.warcHeader("WARC-Record-ID");
    if (sha1(block) !== record.warcBlockDigest) {
      problems.push(`${name}: ${type} ${id}: block digest mismatch`);
    }
    summary.block_digests++;
    if (type === "response") {
      summary.responses++;
      const end = headEnd(block);
      if (end < 0 || sha1(block.subarray(end + 4)) !==
                         record.warcPayloadDigest) {
        problems.push(`${name}: response ${id}: payload digest mismatch`);
      }
      summary.payload_digests++;
    }
    if (type === "revisit") summary.revisits++;
  }
}

// 3. Replay. lookup(url, ts): the newest capture of url at or before ts.
function lookup(url, ts) {
  let best = null;
  for (const c of captures.get(url) || []) {
    if (c.ts <= ts && (best === null || c.ts >= best.ts)) best = c;
  }
  return best;
}
const compact = (date) => (date || "").replace(/[-:TZ]/g, "").slice(0, 14);

for (const [url, list] of captures) {
  const digests = new Set();
  let revisited = false;
  for (const c of list) {
    const found = lookup(url, c.ts);
    summary.lookups++;
    if (!found || found.ts !== c.ts) {
      problems.push(`lookup ${url} @${c.ts}: found ${found && found.ts}`);
      continue;
    }
    // CDXJ times are whole seconds: two captures of one URL in one second
    // (a fetch and its 304 on a fast loopback web) share a key, and the
    // lookup returns one of them. Each capture is read at its own line's
    // offset, so every record is checked once.
    if (found !== c) summary.same_second_captures++;
    const got = await recordAt(c.file, Number(c.cdx.offset),
                               Number(c.cdx.length), true);
    if (!got || got.record.warcTargetURI !== url ||
        compact(got.record.warcDate) !== found.ts) {
      problems.push(`lookup ${url} @${c.ts}: the offset does not hold it`);
      continue;
    }
    if (got.record.warcType === "response") {
      if (c.cdx.status === "200") digests.add(c.cdx.digest);
      continue;
    }
    // A revisit: resolve it to the response that holds its payload.
    revisited = true;
    const refUrl = got.record.warcRefersToTargetURI;
    const refDate = compact(got.record.warcRefersToDate);
    if (!refUrl || !refDate) {
      problems.push(`revisit ${url} @${c.ts}: no WARC-Refers-To-Target-URI/Date`);
      continue;
    }
    // The response it refers to: by URL and date, and (when one second
    // holds several responses of the URL) by WARC-Refers-To.
    let orig = null;
    for (const o of captures.get(refUrl) || []) {
      if (o.ts !== refDate || o.cdx.mime === "warc/revisit") continue;
      const r = await recordAt(o.file, Number(o.cdx.offset),
                               Number(o.cdx.length), false);
      if (r && r.record.warcHeader("WARC-Record-ID") ===
                   got.record.warcHeader("WARC-Refers-To")) {
        orig = r;
        break;
      }
      if (orig === null) orig = r;
    }
    if (!orig) {
      problems.push(`revisit ${url} @${c.ts}: ${refUrl} @${refDate} not found`);
      continue;
    }
    const end = headEnd(orig.block);
    const payload = sha1(orig.block.subarray(end + 4));
    if (payload !== got.record.warcPayloadDigest ||
        payload.slice(5) !== c.cdx.digest ||
        orig.record.warcHeader("WARC-Record-ID") !==
            got.record.warcHeader("WARC-Refers-To")) {
      problems.push(`revisit ${url} @${c.ts}: resolves to a different payload`);
      continue;
    }
    summary.revisits_resolved++;
    if (c.cdx.status === "200") digests.add(c.cdx.digest);
  }
  if (revisited && digests.size >= 2) summary.fetched_revisited_changed++;
}

summary.problems = problems.slice(0, 20);
summary.problem_count = problems.length;
console.log(JSON.stringify(summary));
process.exit(problems.length === 0 ? 0 : 1);

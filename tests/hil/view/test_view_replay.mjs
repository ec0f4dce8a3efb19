// tests/hil/view/test_view_replay.mjs: `achilles replay FILE --view` (docs/view.md section 9). A CSV
// file written here (so every value is known) is replayed with the view on: the page is served,
// a browser connecting starts the waiting replay, every sample the view's frames (and Foxglove's
// client) carry equals the row of the file it came from, measured and truth, through two passes;
// requests a replay cannot carry out get error replies, status and latest are answered; and the
// replay's timing with a viewer reading every frame matches its timing without one (medians of
// the timing error, loosely, and the counts exactly; with ACHILLES_TIMING=1 only, as
// test_view_replay_timing under the label timing).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { check, env, fail, httpGet, npm, until } from "./common.mjs";

const WebSocket = npm("ws");
const { FoxgloveClient } = npm("@foxglove/ws-protocol");

const ROWS = 1000; // 1 s at 1 kHz
const measured = (k) => Math.sin(k / 100) + 0.01 * (k % 7);
const truth = (k) => Math.sin(k / 100);

function writeCsv(dir) {
  const lines = ["time,probe.seq,probe.value,probe.value.true"];
  for (let k = 0; k < ROWS; k++) lines.push(`${k / 1000},${k},${measured(k)},${truth(k)}`);
  const file = path.join(dir, "probe.csv");
  fs.writeFileSync(file, lines.join("\n") + "\n");
  return file;
}

function replay(file, dir, extra) {
  const args = ["replay", file, "--zmq", `ipc://${dir}/pub`, "--no-ctl", "--no-cmd", ...extra];
  const proc = spawn(env.bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  const r = { proc, err: "", exited: null };
  proc.stderr.on("data", (d) => { r.err += d.toString(); });
  proc.on("exit", (code) => { r.exited = code; });
  return r;
}

async function viewUrl(r) {
  return until("the replay to print the view's URL", () => {
    if (r.exited !== null) fail(`achilles replay exited with ${r.exited}: ${r.err}`);
    const m = r.err.match(/view: open (http:\/\/127\.0\.0\.1:(\d+)\/)/);
    return m && Number(m[2]);
  });
}

// The pass of a looped sample (seq counts on across passes: docs/replay.md).
function checkSample(topic, msg, isTruth) {
  const k = msg.seq % ROWS, pass = Math.floor(msg.seq / ROWS);
  const want = isTruth ? truth(k) : measured(k);
  if (msg.values.value !== want) fail(`${topic} seq ${msg.seq}: value ${msg.values.value}, the file has ${want}`);
  if (Math.abs(msg.t - (k / 1000 + pass)) > 1e-9) fail(`${topic} seq ${msg.seq}: t ${msg.t}, expected ${k / 1000 + pass}`);
  if (msg.truth !== isTruth || msg.sensor !== "probe" || msg.valid !== true) fail(`${topic}: ${JSON.stringify(msg)}`);
}

async function testView(file, dir) {
  const r = replay(file, dir, ["--view", "127.0.0.1:0", "--loops", "2", "--status-period", "0.2"]);
  const port = await viewUrl(r);
  await until("the replay to say it waits for a subscriber", () => /waiting for a subscriber/.test(r.err), 20, () => r.err);
  for (const p of ["/", "/view.js", "/view.css", "/lib/chart.min.js"]) {
    check((await httpGet(port, p)).code === 200, `GET ${p} is served by the replay's view`);
  }
  check((await httpGet(port, "/nope")).code === 404, "GET /nope gives 404");
  check(r.exited === null && !/played/.test(r.err), "nothing played before a viewer connected (HTTP alone starts nothing)");

  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, "achilles.view.v1");
  const c = { model: null, frames: 0, seqs: new Set(), truthSeqs: new Set(), replies: [], status: null };
  ws.on("message", (data) => {
    const msg = JSON.parse(data.toString());
    if (msg.type === "model") c.model = msg;
    else if (msg.type === "reply") c.replies.push(msg.reply);
    else if (msg.type === "status") c.status = msg.status;
    else if (msg.type === "frame") {
      c.frames++;
      if (msg.bodies.length || msg.qpos.length || msg.contacts.length) fail("a replay's frame carries bodies, joints or contacts");
      const m = msg.samples["csv/probe"], t = msg.samples["truth/csv/probe"];
      if (m) { checkSample("csv/probe", m, false); c.seqs.add(m.seq); }
      if (t) { checkSample("truth/csv/probe", t, true); c.truthSeqs.add(t.seq); }
    }
  });
  await new Promise((resolve, reject) => { ws.on("open", resolve); ws.on("error", reject); });
  const ask = async (text, what, binary = false) => {
    const n = c.replies.length;
    ws.send(typeof text === "string" || Buffer.isBuffer(text) ? text : JSON.stringify(text), { binary });
    await until(`a reply to ${what}`, () => c.replies.length > n, 20);
    return c.replies[n];
  };
  await until("the model message", () => c.model);
  const m = c.model;
  check(m.replay && m.replay.file === file && m.replay.total === ROWS && m.bodies.length === 0 && m.joints.length === 0,
    "the model message names the replay (file, 1000 samples) and has no bodies or joints (a log holds no model)");
  check(m.sensors.length === 1 && m.sensors[0].topic === "csv/probe" && m.sensors[0].truth_topic === "truth/csv/probe" &&
    m.sensors[0].channels.join() === "value", "the model lists the file's sensor with its topics and channel");

  // Foxglove's client sees the replayed streams as channels
  const fws = new WebSocket(`ws://127.0.0.1:${port}/`, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  const fox = new FoxgloveClient({ ws: fws });
  let channels = null, foxMessages = 0;
  const foxStatus = [];
  fox.on("status", (s) => { foxStatus.push(s); });
  const foxSubs = new Map();
  fox.on("advertise", (ch) => {
    channels = ch;
    for (const chan of ch) if (chan.topic.endsWith("csv/probe")) foxSubs.set(fox.subscribe(chan.id), chan.topic);
  });
  fox.on("message", ({ subscriptionId, timestamp, data }) => {
    const topic = foxSubs.get(subscriptionId);
    const msg = JSON.parse(new TextDecoder().decode(data));
    checkSample(`Foxglove ${topic}`, msg, topic.startsWith("truth/"));
    if (timestamp !== BigInt(Math.round(msg.t * 1e9))) fail(`Foxglove ${topic}: timestamp ${timestamp} is not t = ${msg.t} s`);
    foxMessages++;
  });

  // requests: a replay cannot be paused, resumed, stepped, reset or tuned; bad input is an error
  for (const [req, what, pattern] of [
    [{ cmd: "pause" }, "pause", /pause is not available in a replay/],
    [{ cmd: "resume" }, "resume", /resume is not available in a replay/],
    [{ cmd: "step", n: 10 }, "step", /step is not available in a replay/],
    [{ cmd: "reset" }, "reset", /reset is not available in a replay/],
    [{ cmd: "set_param", sensor: "probe", path: "noise.white.sigma", value: 1 }, "set_param", /set_param is not available/],
    ["nope", "not JSON", /not JSON/],
    [{ cmd: "fly" }, "an unknown request", /unknown request/],
    [{ cmd: "status", x: 1 }, "an unknown key", /x/],
    ["{\"cmd\":\"" + "a".repeat(70000) + "\"}", "a 70 kB message", /max_message_bytes/],
  ]) {
    const rep = await ask(req, what);
    check(rep.ok === false && pattern.test(rep.error), `${what}: error reply (${rep.error.slice(0, 90)})`);
  }
  const bin = await ask(Buffer.from([1, 2, 3]), "a binary message", true);
  check(bin.ok === false && /binary/.test(bin.error), "a binary message: error reply");

  await until("samples of the first pass in the frames", () => c.seqs.size > 5, 20);
  await until("the Foxglove advertise", () => channels, 20);
  const chan = fox.advertise({ topic: "commands", encoding: "json", schemaName: "achilles.Commands" });
  fox.sendMessage(chan, new TextEncoder().encode(JSON.stringify({ v: 1, commands: { motor: 0.05 } })));
  await until("a Foxglove status message refusing the command", () => foxStatus.length > 0, 20);
  check(foxStatus[0].level === 2 && /commands are not applied in a replay/.test(foxStatus[0].message),
    `Foxglove: a published command is refused (${foxStatus[0].message})`);
  const st = await ask({ cmd: "status" }, "status");
  check(st.ok && st.status.replay.total === ROWS && st.status.replay.played > 0 && st.status.mode === "realtime",
    `status: the replay's position (${st.status.replay.played} of ${ROWS} played)`);
  const latest = await ask({ cmd: "latest" }, "latest");
  check(latest.ok && latest.samples["csv/probe"] && latest.samples["truth/csv/probe"], "latest: the newest measured and truth samples");
  checkSample("latest csv/probe", latest.samples["csv/probe"], false);
  checkSample("latest truth/csv/probe", latest.samples["truth/csv/probe"], true);

  await until("the replay to finish its two passes", () => r.exited !== null, 30, () => r.err);
  check(r.exited === 0, `the replay exits with 0 (${r.exited})`);
  const secondPass = [...c.seqs].filter((s) => s >= ROWS).length;
  check(c.seqs.size >= 20 && secondPass > 0,
    `${c.frames} frames carried ${c.seqs.size} distinct samples over both passes (${secondPass} of the second), each equal to its row of the file`);
  check(c.truthSeqs.size >= 20, `${c.truthSeqs.size} truth samples, each equal to the file's truth`);
  check(channels && channels.some((ch) => ch.topic === "csv/probe") && channels.some((ch) => ch.topic === "truth/csv/probe") &&
    channels.some((ch) => ch.topic === "status"), "Foxglove: the replayed streams and the status are advertised as channels");
  check(foxMessages > 10, `Foxglove: ${foxMessages} messages, each equal to its row of the file`);
  check(c.status && c.status.replay && c.status.replay.total === ROWS, "status messages carry the replay's figures");
  ws.close();
  fws.close();
}

// The summary line of a --quiet replay.
function summary(r) {
  const m = r.err.match(/replay: (\d+) samples in (\d+) messages, (\d+) pass(?:es)?, timing error p50 (\d+) us p99 (\d+) us/);
  if (!m) fail(`no summary line in: ${r.err}`);
  return { samples: Number(m[1]), messages: Number(m[2]), p50: Number(m[4]), p99: Number(m[5]) };
}

// The replay's timing with a viewer reading every frame against without: runs alternate. Every
// run plays every sample, a viewer reads frames; with timing (ACHILLES_TIMING=1, the label
// timing) two rounds, and the status count (one a second) and the timing error are judged.
async function testTiming(file, dir, timing) {
  const without = [], withView = [];
  for (let round = 0; round < (timing ? 2 : 1); round++) {
    const a = replay(file, dir, ["--no-wait", "--quiet"]);
    await until("a replay without the view to finish", () => a.exited !== null, 30, () => a.err);
    without.push(summary(a));
    const b = replay(file, dir, ["--quiet", "--view", "127.0.0.1:0"]);
    const port = await viewUrl(b);
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, "achilles.view.v1");
    let frames = 0;
    ws.on("message", (d) => { if (JSON.parse(d.toString()).type === "frame") frames++; });
    ws.on("error", () => {});
    await until("a replay with a viewer to finish", () => b.exited !== null, 30, () => b.err);
    withView.push({ ...summary(b), frames });
  }
  for (const s of [...without, ...withView]) {
    if (s.samples !== ROWS) fail(`a replay played ${s.samples} samples, not ${ROWS}`);
  }
  check(withView.every((s) => s.frames > 10), `the viewer read frames (${withView.map((s) => s.frames).join(", ")})`);
  if (!timing) {
    console.log("the timing with a viewer against without: judged by test_view_replay_timing (ctest -L timing)");
    return;
  }
  // messages: the samples plus the status messages (one a second and a final one)
  check([...without, ...withView].every((s) => s.messages >= ROWS + 1 && s.messages <= ROWS + 3),
    `every replay sent its ${ROWS} samples and 1 to 3 status messages, with or without a viewer (${[...without, ...withView].map((s) => s.messages).join(", ")})`);
  const med = (xs) => xs.map((s) => s.p50).sort((x, y) => x - y)[0]; // the better of two rounds
  const w = med(without), v = med(withView);
  console.log(`timing error p50 without the view: ${without.map((s) => s.p50).join(", ")} us; with a viewer: ${withView.map((s) => s.p50).join(", ")} us`);
  check(v <= 3 * w + 300, `the timing error's median with a viewer (${v} us) is within 3 times + 300 us of without (${w} us)`);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "achilles-view-replay-"));
try {
  const file = writeCsv(dir);
  await testView(file, dir);
  // the verdicts on wall-clock time only in test_view_replay_timing (ctest -L timing)
  await testTiming(file, dir, process.env.ACHILLES_TIMING === "1");
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}

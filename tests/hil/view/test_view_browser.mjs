// tests/hil/view/test_view_browser.mjs: the page in headless Chromium (Debian's chromium), driven over
// the DevTools protocol, against `achilles run --view` in lockstep. One browser session, two
// pages: the page loads without console errors; the 3D canvas is not blank (pixels of a
// screenshot); the joint angles the page holds are the simulator's ground truth after the steps it
// asked for (same step, same time: the frame that followed them); the plots gain points; pause
// and step from the page change the simulator's step count (and pause holds it); both pages
// update. Writes the screenshot to $ACHILLES_SCREENSHOT (docs/view.md, README).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { check, fail, npm, sleep, startAchilles, stopAchilles, until, SKIP } from "./common.mjs";

const WebSocket = npm("ws");

// --- Chromium over the DevTools protocol ----------------------------------------------------------

async function startChromium() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "achilles-chromium-"));
  const exe = ["chromium", "chromium-browser", "google-chrome"].map((n) => `/usr/bin/${n}`).find((p) => fs.existsSync(p));
  if (!exe) {
    console.log("SKIP: chromium is not installed (tools/scripts/bootstrap.sh deps installs Debian's chromium)");
    process.exit(SKIP);
  }
  const args = ["--headless", "--no-sandbox", "--disable-gpu-sandbox", "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
    "--mute-audio", `--user-data-dir=${profile}`, "--remote-debugging-port=0", "--window-size=1100,620", "about:blank"];
  const proc = spawn(exe, args, { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  proc.stderr.on("data", (d) => { err += d.toString(); });
  const portFile = path.join(profile, "DevToolsActivePort");
  const end = Date.now() + 30000;
  while (!fs.existsSync(portFile) || fs.readFileSync(portFile, "utf8").split("\n").length < 2) {
    if (proc.exitCode !== null || Date.now() > end) {
      console.log(`SKIP: chromium could not start (${proc.exitCode !== null ? `exit ${proc.exitCode}` : "no DevTools port after 30 s"}):\n${err.slice(-2000)}`);
      proc.kill("SIGKILL");
      process.exit(SKIP);
    }
    await sleep(50);
  }
  const [port, wsPath] = fs.readFileSync(portFile, "utf8").split("\n");
  const ws = new WebSocket(`ws://127.0.0.1:${port}${wsPath}`, { perMessageDeflate: false, maxPayload: 256 << 20 });
  await new Promise((resolve, reject) => { ws.on("open", resolve); ws.on("error", reject); });
  const cdp = { ws, proc, profile, id: 0, waiting: new Map(), listeners: [] };
  ws.on("message", (data) => {
    const msg = JSON.parse(data.toString());
    if (msg.id && cdp.waiting.has(msg.id)) {
      const { resolve, reject } = cdp.waiting.get(msg.id);
      cdp.waiting.delete(msg.id);
      if (msg.error) reject(new Error(`${JSON.stringify(msg.error)}`)); else resolve(msg.result);
    } else if (msg.method) {
      for (const l of cdp.listeners) l(msg);
    }
  });
  cdp.send = (method, params = {}, sessionId) => new Promise((resolve, reject) => {
    const id = ++cdp.id;
    cdp.waiting.set(id, { resolve, reject });
    ws.send(JSON.stringify({ id, method, params, sessionId }));
  });
  return cdp;
}

async function openPage(cdp, url, errors) {
  const { targetId } = await cdp.send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
  cdp.listeners.push((msg) => {
    if (msg.sessionId !== sessionId) return;
    if (msg.method === "Runtime.exceptionThrown") errors.push(`exception: ${msg.params.exceptionDetails.text} ${JSON.stringify(msg.params.exceptionDetails.exception?.description || "")}`);
    if (msg.method === "Runtime.consoleAPICalled" && (msg.params.type === "error" || msg.params.type === "assert"))
      errors.push(`console.${msg.params.type}: ${msg.params.args.map((a) => a.value ?? a.description).join(" ")}`);
    if (msg.method === "Log.entryAdded" && msg.params.entry.level === "error") errors.push(`log: ${msg.params.entry.text} ${msg.params.entry.url || ""}`);
  });
  await cdp.send("Runtime.enable", {}, sessionId);
  await cdp.send("Log.enable", {}, sessionId);
  await cdp.send("Page.enable", {}, sessionId);
  await cdp.send("Emulation.setDeviceMetricsOverride", { width: 1100, height: 620, deviceScaleFactor: 1, mobile: false }, sessionId);
  await cdp.send("Page.navigate", { url }, sessionId);
  const page = { sessionId };
  page.eval = async (expr) => {
    const r = await cdp.send("Runtime.evaluate", { expression: expr, awaitPromise: true, returnByValue: true }, sessionId);
    if (r.exceptionDetails) fail(`page evaluation of ${expr} threw: ${r.exceptionDetails.exception?.description || r.exceptionDetails.text}`);
    return r.result.value;
  };
  return page;
}

// --- the page of a replay (`achilles replay FILE --view`, docs/view.md section 9) ------------------

// A looping replay of a CSV file (an encoder with its truth) in a third page: it loads without
// console errors, says there is no model, plots the samples, shows the replay's position, and
// its Pause gets the replay's error reply; Step is disabled.
async function replayPage(cdp) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "achilles-view-replay-page-"));
  const lines = ["time,enc.seq,enc.counts,enc.angle,enc.velocity,enc.index,enc.angle.true"];
  for (let k = 0; k < 2000; k++) {
    const a = Math.sin(k / 200);
    lines.push(`${k / 1000},${k},${Math.round(a * 4096)},${a + 0.002 * Math.sin(k)},0,0,${a}`);
  }
  const file = path.join(dir, "enc.csv");
  fs.writeFileSync(file, lines.join("\n") + "\n");
  const proc = spawn(process.env.ACHILLES_BIN, ["replay", file, "--loop", "--zmq", `ipc://${dir}/pub`, "--no-ctl", "--no-cmd",
    "--view", "127.0.0.1:0", "--quiet"], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  proc.stderr.on("data", (d) => { err += d.toString(); });
  try {
    const url = await until("the replay to print the view's URL", () => {
      if (proc.exitCode !== null) fail(`achilles replay exited with ${proc.exitCode}: ${err}`);
      return (err.match(/open (http:\/\/127\.0\.0\.1:\d+\/)/) || [])[1];
    });
    const errors = [];
    const p = await openPage(cdp, url, errors);
    await until("the replay's page to load its model and a frame", () => p.eval("!!(window.achilles && achilles.ready && achilles.frame)"), 30);
    check(await p.eval("!!achilles.model.replay && /no robot model/.test(document.getElementById('no-model').textContent)"),
      "the replay's page says a log holds no robot model");
    const points0 = await p.eval("achilles.points()");
    await until("the replay's plots to gain points", async () => (await p.eval("achilles.points()")) > points0 + 10, 10);
    check(true, "the replay's plots gain points");
    await until("the replay's status to show its position", () => p.eval("/samples, pass/.test(document.getElementById('status').textContent)"), 10);
    check(true, "the status shows the replay's position");
    const reply = await p.eval("document.getElementById('pause').click(); new Promise((r) => setTimeout(() => r(document.getElementById('reply').textContent), 500))");
    check(/pause is not available in a replay/.test(reply), `Pause on the replay's page shows the error reply (${reply})`);
    check(await p.eval("document.getElementById('step').disabled && document.getElementById('reset').disabled"), "Step and Reset are disabled for a replay");
    check(errors.length === 0, `the replay's page: no console errors (${errors.join("; ")})`);
  } finally {
    if (proc.exitCode === null) proc.kill("SIGINT");
    await until("the replay to exit after SIGINT", () => proc.exitCode !== null, 20);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// --- a PNG decoder (8-bit RGB/RGBA, no interlace: what Chromium writes) ------------------------

function decodePng(buf) {
  let pos = 8, width = 0, height = 0, channels = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos), type = buf.toString("latin1", pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") {
      width = data.readUInt32BE(0), height = data.readUInt32BE(4);
      if (data[8] !== 8 || data[12] !== 0) fail("screenshot PNG: expected 8-bit, not interlaced");
      channels = { 2: 3, 6: 4 }[data[9]];
      if (!channels) fail(`screenshot PNG: colour type ${data[9]} not handled`);
    } else if (type === "IDAT") idat.push(data);
    pos += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels, out = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? out[y * stride + x - channels] : 0, b = y > 0 ? out[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? out[(y - 1) * stride + x - channels] : 0;
      let p = line[x];
      if (f === 1) p += a; else if (f === 2) p += b; else if (f === 3) p += (a + b) >> 1;
      else if (f === 4) { const q = a + b - c, pa = Math.abs(q - a), pb = Math.abs(q - b), pc = Math.abs(q - c); p += pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      out[y * stride + x] = p & 255;
    }
  }
  return { width, height, channels, pixels: out };
}

// --- the test ---------------------------------------------------------------------------------------

const a = await startAchilles();
const cdp = await startChromium().catch((e) => { console.log(`SKIP: chromium could not be driven: ${e.message}`); process.exit(SKIP); });
const errors1 = [], errors2 = [];
try {
  const p1 = await openPage(cdp, a.url, errors1);
  const p2 = await openPage(cdp, a.url, errors2);
  for (const [p, name] of [[p1, "page 1"], [p2, "page 2"]]) {
    await until(`${name} to load the model, the hello reply and a frame`, () =>
      p.eval("!!(window.achilles && achilles.ready && achilles.hello && achilles.frame)"), 30);
  }
  check(true, "both pages loaded the model and their first frame");
  const shoulder = await p1.eval("achilles.model.joints.find((j) => j.name === 'shoulder').qposadr");
  const steps0 = await p1.eval("achilles.frame.steps");
  const points0 = await p1.eval("achilles.points()");

  // step from the page: 500 steps (the arm, its motors idle, falls under gravity)
  await p1.eval("document.getElementById('step-n').value = '500'; document.getElementById('step').click(); true");
  for (const [p, name] of [[p1, "page 1"], [p2, "page 2"]]) {
    await until(`${name} to show step ${steps0 + 500}`, () => p.eval(`achilles.frame.steps === ${steps0 + 500}`));
  }
  check(true, "Step on page 1 advanced the simulator by 500 steps, and both pages show it");
  // ground truth from the ZeroMQ transport's newest truth message (the `latest` request)
  const cmp = await p1.eval(`achilles.request({cmd: "latest"}).then((l) => ({
      steps: l.steps, t: l.t, truth: l.samples["truth/enc/enc_shoulder"].values.angle,
      tTruth: l.samples["truth/enc/enc_shoulder"].t,
      page: achilles.frame.qpos[${shoulder}], pageT: achilles.frame.t, pageSteps: achilles.frame.steps}))`);
  check(cmp.steps === cmp.pageSteps && cmp.t === cmp.pageT, `the page's frame is at the simulator's step and time (${cmp.pageSteps}, t=${cmp.pageT})`);
  check(Math.abs(cmp.page - cmp.truth) < 1e-12 && Math.abs(cmp.truth) > 1e-3,
    `the page's shoulder angle ${cmp.page} is the ground truth ${cmp.truth} (the arm moved)`);
  await until("the plots to gain points", async () => (await p1.eval("achilles.points()")) > points0 + 3, 10);
  check(true, `the plots gained points (${points0} → ${await p1.eval("achilles.points()")})`);

  // pause from the page: granted steps wait; resume lets them run
  const paused = await p1.eval("document.getElementById('pause').click(); achilles.request({cmd:'status'}).then((r) => r.status.paused)");
  check(paused === true, "Pause on the page pauses the simulator");
  await p1.eval("document.getElementById('step-n').value = '100'; document.getElementById('step').click(); true");
  const frames = await p1.eval("achilles.frames");
  await until("two more frames while paused", () => p1.eval(`achilles.frames >= ${frames + 2}`), 10);
  check((await p1.eval("achilles.frame.steps")) === steps0 + 500, "paused: the granted steps do not run");
  await p2.eval("document.getElementById('resume').click(); true");
  for (const [p, name] of [[p1, "page 1"], [p2, "page 2"]]) {
    await until(`${name} to show step ${steps0 + 600} after Resume on page 2`, () => p.eval(`achilles.frame.steps === ${steps0 + 600}`));
  }
  check(true, "Resume on page 2 let the 100 granted steps run; both pages follow");

  // live tuning from the page's controls
  const tuned = await p1.eval(`(async () => {
      document.getElementById('tune-sensor').value = 'enc_shoulder';
      document.getElementById('tune-path').value = 'noise.white.sigma';
      document.getElementById('tune-value').value = '0.002';
      document.getElementById('tune-set').click();
      const r = await achilles.request({cmd: 'get_param', sensor: 'enc_shoulder', path: 'noise.white.sigma'});
      return r.value; })()`);
  check(tuned === 0.002, "Set on the page changed the encoder's noise (get_param reads 0.002)");

  // the screenshot: the 3D canvas (left part) must not be blank
  await sleep(300); // let the plots redraw once (they refresh ten times a second)
  await cdp.send("Page.bringToFront", {}, p1.sessionId); // a background tab draws no frames
  const shot = await cdp.send("Page.captureScreenshot", { format: "png" }, p1.sessionId);
  const png = Buffer.from(shot.data, "base64");
  if (process.env.ACHILLES_SCREENSHOT) fs.writeFileSync(process.env.ACHILLES_SCREENSHOT, png);
  const img = decodePng(png);
  const canvasWidth = await p1.eval("document.getElementById('canvas').clientWidth");
  const colors = new Map();
  let differ = 0, total = 0;
  const bg = img.pixels.subarray((60 * img.width + 5) * img.channels, (60 * img.width + 5) * img.channels + 3);
  for (let y = 40; y < img.height; y += 2) {
    for (let x = 0; x < Math.min(canvasWidth, img.width); x += 2) {
      const o = (y * img.width + x) * img.channels;
      const key = (img.pixels[o] << 16) | (img.pixels[o + 1] << 8) | img.pixels[o + 2];
      colors.set(key, (colors.get(key) || 0) + 1);
      total++;
      if (Math.abs(img.pixels[o] - bg[0]) + Math.abs(img.pixels[o + 1] - bg[1]) + Math.abs(img.pixels[o + 2] - bg[2]) > 30) differ++;
    }
  }
  check(colors.size > 50 && differ / total > 0.01,
    `the 3D canvas is drawn: ${colors.size} colours, ${(100 * differ / total).toFixed(1)} % of its pixels away from the background`);

  check(errors1.length === 0 && errors2.length === 0, `no console errors (${[...errors1, ...errors2].join("; ")})`);
  await replayPage(cdp);
} catch (e) {
  console.error(e.stack || e);
  console.error(a.stderr());
  process.exitCode = 1;
} finally {
  await Promise.race([cdp.send("Browser.close"), sleep(5000)]).catch(() => {}); // closes its helpers too
  cdp.ws.close();
  if (cdp.proc.exitCode === null && cdp.proc.signalCode === null) cdp.proc.kill("SIGTERM");
  await until("chromium to exit", () => cdp.proc.exitCode !== null || cdp.proc.signalCode !== null, 20).catch(() => cdp.proc.kill("SIGKILL"));
  try { // a helper process may still be writing its profile for a moment
    fs.rmSync(cdp.profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  } catch (e) {
    console.log(`warning: could not remove chromium's profile ${cdp.profile}: ${e.message}`);
  }
  const code = await stopAchilles(a);
  if (code !== 0) {
    console.error(`achilles exited with ${code}:\n${a.stderr()}`);
    process.exitCode = 1;
  }
}
process.exit(process.exitCode || 0);

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
import { check, fail, npm, sleep, startAchilles, stopAchilles, until, SKIP } from "./common.mjs";
import { decodePng, openPage, startChromium, stopChromium } from "./chromium.mjs";

const WebSocket = npm("ws");

// --- a phone-sized window ----------------------------------------------------------------------------

// 390×844 (a phone held upright, its viewport taken from the page's meta tag): the 3D view spans
// the width above the rest, and no two panels overlap; nothing needs scrolling sideways.
async function phonePage(cdp, url) {
  const errors = [];
  const p = await openPage(cdp, url, errors, [390, 844], true);
  await until("the phone-sized page to load", () => p.eval("!!(window.achilles && achilles.ready && achilles.frame)"), 30);
  const r = await p.eval(`(() => {
      const box = (id) => { const b = document.getElementById(id).getBoundingClientRect();
        return { id, x: b.left, y: b.top + scrollY, w: b.width, h: b.height }; };
      return { meta: !!document.querySelector('meta[name=viewport]'), width: innerWidth,
        scroll: document.documentElement.scrollWidth, canvas: box("canvas"), overlay: box("overlay"),
        panels: ["scene", "status-box", "controls", "plots-box"].map(box),
        controls: [...document.querySelectorAll("button, input, select")].map((e) => e.getBoundingClientRect().right) };
    })()`);
  const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
  const pairs = [];
  r.panels.forEach((a, i) => r.panels.slice(i + 1).forEach((b) => { if (overlap(a, b)) pairs.push(`${a.id}/${b.id}`); }));
  const s = r.panels[0], o = r.overlay;
  check(r.meta && r.width === 390, `the page has a viewport meta tag (width ${r.width})`);
  check(r.canvas.w >= 370 && r.canvas.h >= 240, `the 3D view spans the phone's width (${r.canvas.w}×${r.canvas.h} px)`);
  check(pairs.length === 0, `no two panels overlap (${pairs.join(", ") || JSON.stringify(r.panels)})`);
  check(o.y >= s.y && o.y + o.h <= s.y + s.h && o.x >= s.x && o.x + o.w <= s.x + s.w, "the overlay stays on the 3D view");
  check(r.scroll <= 390 && r.controls.every((x) => x <= 390), `nothing sticks out sideways (page ${r.scroll} px wide, rightmost control at ${Math.max(...r.controls)} px)`);
  check(errors.length === 0, `the phone-sized page: no console errors (${errors.join("; ")})`);
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
    const looks = await p.eval(`["step", "reset", "tune-set", "pause"].map((id) => Number(getComputedStyle(document.getElementById(id)).opacity))`);
    check(looks.slice(0, 3).every((o) => o < 0.6) && looks[3] === 1, `disabled controls look disabled (opacity ${looks.join(", ")}; Pause, enabled, 1)`);
    check(errors.length === 0, `the replay's page: no console errors (${errors.join("; ")})`);
  } finally {
    if (proc.exitCode === null) proc.kill("SIGINT");
    await until("the replay to exit after SIGINT", () => proc.exitCode !== null, 20);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// --- the test ---------------------------------------------------------------------------------------

const a = await startAchilles();
const cdp = await startChromium(WebSocket).catch((e) => { console.log(`SKIP: chromium could not be driven: ${e.message}`); process.exit(SKIP); });
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

  // the plots: the wrist encoder (counts only) plots its counts; axes have titles; tick labels
  // have at most four significant digits (a constant signal included)
  const plots = await p1.eval(`achilles.charts.map((c) => ({ sensor: c.sensor.name, channels: c.channels,
      points: c.chart.data.datasets[0].data.length, x: c.chart.options.scales.x.title.text,
      y: c.chart.options.scales.y.title.text, err: c.chart.options.scales.err.title.text,
      labels: [...c.chart.scales.y.ticks, ...c.chart.scales.err.ticks].map((t) => String(t.label)),
      title: c.chart.canvas.parentNode.previousSibling.textContent }))`);
  const wrist = plots.find((c) => c.sensor === "enc_wrist_roll");
  check(wrist && wrist.channels.join() === "counts" && wrist.points > 0 && /counts \(count\)/.test(wrist.title) && wrist.y === "counts (count)",
    `the wrist encoder (counts and velocity, no angle) plots its counts (${JSON.stringify(wrist && { ...wrist, labels: undefined })})`);
  check(plots.every((c) => c.x === "time (s)" && /\(.+\)/.test(c.y) && /^error \(/.test(c.err)),
    `every plot's axes have titles (${plots.map((c) => `${c.y} | ${c.err}`).join("; ")})`);
  const digits = (label) => label.replace(/^-/, "").replace(/e.*$/i, "").replace(".", "").replace(/^0+/, "").length;
  const long = plots.flatMap((c) => c.labels).filter((l) => digits(l) > 4);
  check(long.length === 0 && plots.every((c) => c.labels.length >= 2), `tick labels have at most four significant digits (${long.slice(0, 5).join(" ") || plots[0].labels.join(" ")})`);

  // a still picture is not drawn again: frames keep coming (each status makes one) but the
  // poses do not change, so neither the 3D view nor the plots redraw
  await cdp.send("Page.bringToFront", {}, p1.sessionId); // a background tab draws no frames
  await until("page 1 to draw", () => p1.eval("achilles.renders > 0"), 10);
  await sleep(300); // the plots' last redraw (ten a second), the last picture
  const idle0 = await p1.eval("({ renders: achilles.renders, charts: achilles.chartUpdates, frames: achilles.frames })");
  await until("three more frames of the resting arm", () => p1.eval(`achilles.frames >= ${idle0.frames + 3}`), 10);
  const idle1 = await p1.eval("({ renders: achilles.renders, charts: achilles.chartUpdates, frames: achilles.frames })");
  check(idle1.renders === idle0.renders && idle1.charts === idle0.charts,
    `with nothing changing, ${idle1.frames - idle0.frames} frames drew nothing (renders ${idle0.renders} → ${idle1.renders}, chart updates ${idle0.charts} → ${idle1.charts})`);

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
  await phonePage(cdp, a.url);
  await replayPage(cdp);
} catch (e) {
  console.error(e.stack || e);
  console.error(a.stderr());
  process.exitCode = 1;
} finally {
  await stopChromium(cdp);
  const code = await stopAchilles(a);
  if (code !== 0) {
    console.error(`achilles exited with ${code}:\n${a.stderr()}`);
    process.exitCode = 1;
  }
}
process.exit(process.exitCode || 0);

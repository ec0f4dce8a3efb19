// tests/hil/view/test_view_robots.mjs: the page with robots that are not ours, in headless
// Chromium (chromium.mjs): the KUKA KR5 and the Barrett WAM from Debian's dart-doc (URDF with
// STL meshes) and the club arm.
//   - the camera frames each robot at start: the bounding box three.js computes of what is
//     drawn, projected by the page's camera, lies inside the canvas and fills a good part of it
//     (at 1100×620, and for the club arm at 1280×1700 too); the Frame button frames it again
//     after the camera was moved away;
//   - the KR5's meshes are drawn: at the projection of each hull's centre the pixel changes when
//     the meshes are hidden (a screenshot each way);
//   - the club arm's table plane is drawn at its height (z = -0.12), not at z = 0;
//   - in realtime mode Step is disabled and looks it.
import fs from "node:fs";
import { check, fail, npm, startAchilles, stopAchilles, until, viewClient } from "./common.mjs";
import { closePage, openPage, pixel, screenshot, startChromium, stopChromium } from "./chromium.mjs";

const WebSocket = npm("ws");
const DART = "/usr/share/doc/dart/data/urdf";
const KR5 = `${DART}/KR5/KR5 sixx R650.urdf`, WAM = `${DART}/wam/wam.urdf`;

// The page's robot box, projected by its camera: normalized device coordinates of the 8 corners.
const projectedBox = `(() => {
  const box = new THREE.Box3().setFromObject(achilles.robot), out = [];
  for (const x of [box.min.x, box.max.x]) for (const y of [box.min.y, box.max.y]) for (const z of [box.min.z, box.max.z]) {
    const v = new THREE.Vector3(x, y, z).project(achilles.camera);
    out.push([v.x, v.y, v.z]);
  }
  return out; })()`;

function framed(corners, what) {
  const xs = corners.map((c) => c[0]), ys = corners.map((c) => c[1]);
  const inside = corners.every(([x, y, z]) => Math.abs(x) <= 1 && Math.abs(y) <= 1 && z > -1 && z < 1);
  const fill = Math.max(Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys)) / 2;
  check(inside && fill > 0.35, `${what}: the robot's box lies inside the canvas and spans ${(100 * fill).toFixed(0)} % of it ` +
    `(x ${Math.min(...xs).toFixed(2)}..${Math.max(...xs).toFixed(2)}, y ${Math.min(...ys).toFixed(2)}..${Math.max(...ys).toFixed(2)})`);
}

async function robotPage(cdp, url, what, size = [1100, 620]) {
  const errors = [];
  const p = await openPage(cdp, url, errors, size);
  p.errors = errors;
  await cdp.send("Page.bringToFront", {}, p.sessionId);
  await until(`${what}: the page to load and draw its first frame`, () => p.eval("!!(window.achilles && achilles.ready && achilles.framed && achilles.renders > 0)"), 30);
  return p;
}

async function kr5(cdp) {
  const a = await startAchilles([], "lockstep", KR5);
  try {
    const p = await robotPage(cdp, a.url, "KR5");
    framed(await p.eval(projectedBox), "KR5");
    // the hulls' centres on the screen, then the pixels there with the meshes shown and hidden
    const spots = await p.eval(`(() => { const c = document.getElementById("canvas").getBoundingClientRect();
      return achilles.meshes.map((m) => { m.geometry.computeBoundingBox();
        const v = m.geometry.boundingBox.getCenter(new THREE.Vector3()).applyMatrix4(m.matrixWorld).project(achilles.camera);
        return [c.left + (v.x + 1) / 2 * c.width, c.top + (1 - v.y) / 2 * c.height]; }); })()`);
    check(spots.length === 7, `the KR5's 7 mesh links are drawn as meshes (${spots.length})`);
    const shown = await screenshot(cdp, p);
    // the count is read in the same evaluation that asks for the redraw: read after it, a frame
    // drawn in between would be counted already, and a still arm draws no other
    const r0 = await p.eval("(() => { const r = achilles.renders; achilles.meshes.forEach((m) => { m.visible = false; }); achilles.redraw(); return r; })()");
    await until("the picture without the meshes", () => p.eval(`achilles.renders > ${r0}`), 10);
    const hidden = await screenshot(cdp, p);
    await p.eval("achilles.meshes.forEach((m) => { m.visible = true; }); achilles.redraw(); true");
    const covered = spots.filter(([x, y]) => {
      const a = pixel(shown, x, y), b = pixel(hidden, x, y);
      return Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2]) > 40 && a[2] > a[0];
    });
    check(covered.length >= spots.length - 1, `a mesh's bluish pixels at ${covered.length} of the ${spots.length} hull centres, gone when the meshes are hidden`);
    check(p.errors.length === 0, `KR5: no console errors (${p.errors.join("; ")})`);
    await closePage(cdp, p);
  } finally {
    if ((await stopAchilles(a)) !== 0) fail(`achilles (KR5) did not exit cleanly:\n${a.stderr()}`);
  }
}

async function wam(cdp) {
  const a = await startAchilles([], "lockstep", WAM);
  try {
    const p = await robotPage(cdp, a.url, "WAM");
    framed(await p.eval(projectedBox), "WAM");
    check(await p.eval("achilles.meshes.length") === 8, "the WAM's 8 meshes are drawn");
    // move the camera far off, then Frame brings the robot back into view
    await p.eval("achilles.camera.position.set(30, 30, 30); achilles.camera.lookAt(40, 0, 0); achilles.camera.updateMatrixWorld(); achilles.redraw(); true");
    const off = await p.eval(projectedBox);
    check(!off.every(([x, y]) => Math.abs(x) <= 1 && Math.abs(y) <= 1), "with the camera moved away the robot is out of view");
    await p.eval("document.getElementById('frame').click(); true");
    framed(await p.eval(projectedBox), "WAM after Frame");
    check(p.errors.length === 0, `WAM: no console errors (${p.errors.join("; ")})`);
    await closePage(cdp, p);
  } finally {
    if ((await stopAchilles(a)) !== 0) fail(`achilles (WAM) did not exit cleanly:\n${a.stderr()}`);
  }
}

async function clubArm(cdp) {
  const a = await startAchilles([], "realtime");
  try {
    // paused at once: a still arm (a moving one redraws at 60 Hz, which costs a software-GL
    // browser a CPU), still a realtime run
    const v = viewClient(WebSocket, a.port);
    await v.open;
    check((await v.ask({ cmd: "pause" }, "pause")).ok, "the realtime club arm is paused");
    for (const size of [[1100, 620], [1280, 1700]]) {
      const p = await robotPage(cdp, a.url, `club arm ${size.join("×")}`, size);
      framed(await p.eval(projectedBox), `club arm at ${size.join("×")}`);
      if (size[0] === 1100) {
        const table = await p.eval(`achilles.planes.map((g) => { const v = g.getWorldPosition(new THREE.Vector3());
          return [v.x, v.y, v.z, g.getWorldDirection(new THREE.Vector3()).z]; })`);
        check(table.length === 1 && Math.abs(table[0][2] + 0.12) < 1e-12 && Math.abs(table[0][3]) > 0.999999,
          `the table is drawn where the model has it: z = ${table[0] && table[0][2]} (its normal vertical)`);
        const step = await p.eval(`(() => { const e = document.getElementById("step");
          return { disabled: e.disabled, opacity: Number(getComputedStyle(e).opacity), title: e.title }; })()`);
        check(step.disabled && step.opacity < 0.6 && /lockstep/.test(step.title), `realtime: Step is disabled and looks it (opacity ${step.opacity}; "${step.title}")`);
      }
      check(p.errors.length === 0, `club arm: no console errors (${p.errors.join("; ")})`);
      await closePage(cdp, p);
    }
    v.ws.close();
  } finally {
    if ((await stopAchilles(a)) !== 0) fail(`achilles (club arm) did not exit cleanly:\n${a.stderr()}`);
  }
}

if (!fs.existsSync(KR5) || !fs.existsSync(WAM)) {
  const why = `the KR5 and WAM URDFs are missing (${DART}: Debian package dart-doc)`;
  if (process.env.CI === "true") fail(why);
  console.log(`SKIP: ${why}`);
  process.exit(77);
}
const cdp = await startChromium(WebSocket).catch((e) => { console.log(`SKIP: chromium could not be driven: ${e.message}`); process.exit(77); });
try {
  await clubArm(cdp);
  await kr5(cdp);
  await wam(cdp);
} catch (e) {
  console.error(e.stack || e);
  process.exitCode = 1;
} finally {
  await stopChromium(cdp);
}
process.exit(process.exitCode || 0);

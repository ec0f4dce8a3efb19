// hil/view/www/view.js: the live view's page. Talks the view protocol (docs/view.md) over one
// WebSocket: "model" once, then "frame" at the display rate and "status" each status period;
// control requests go out as the ZeroMQ control socket takes them and come back as "reply".
// window.achilles holds the state (the browser tests read it).
"use strict";

const A = (window.achilles = {
  model: null, hello: null, frame: null, status: null, frames: 0, charts: [],
  replies: 0, request: null, points: () => 0, ready: false,
});

// --- the connection ---------------------------------------------------------------------------

const ws = new WebSocket(`ws://${location.host}/`, "achilles.view.v1");
const pending = []; // replies come back in the order the requests went out

A.request = (req) => new Promise((resolve) => {
  pending.push(resolve);
  ws.send(typeof req === "string" ? req : JSON.stringify(req));
});

ws.onmessage = (ev) => {
  const msg = JSON.parse(ev.data);
  if (msg.type === "model") onModel(msg);
  else if (msg.type === "frame") onFrame(msg);
  else if (msg.type === "status") onStatus(msg);
  else if (msg.type === "reply") {
    A.replies++;
    const resolve = pending.shift();
    if (resolve) resolve(msg.reply);
  }
};
ws.onopen = () => A.request({ cmd: "hello" }).then((h) => { A.hello = h; onHello(h); });
ws.onclose = () => { document.getElementById("model").textContent += " (disconnected)"; };

// --- 3D ------------------------------------------------------------------------------------------

const canvas = document.getElementById("canvas");
const renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio || 1);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x1b2026);
const camera = new THREE.PerspectiveCamera(45, 1, 0.01, 100);
camera.up.set(0, 0, 1); // the simulator's z is up
camera.position.set(0.75, -0.8, 0.6);
// orbit (left drag, one finger), pan (right drag, two fingers), zoom (wheel, pinch)
const controls = new THREE.OrbitControls(camera, canvas);
controls.screenSpacePanning = true;
controls.target.set(0.2, 0, 0.1);
controls.update();
scene.add(new THREE.HemisphereLight(0xffffff, 0x404040, 0.9));
const sun = new THREE.DirectionalLight(0xffffff, 0.6);
sun.position.set(2, -1, 3);
scene.add(sun);

const robot = new THREE.Group(); // the bodies (what the camera frames); planes apart
scene.add(robot);
const bodyGroups = [];
const contactPool = [];
A.camera = camera, A.robot = robot, A.planes = [], A.meshes = [];
const linkMaterial = new THREE.MeshStandardMaterial({ color: 0xd08c3c, roughness: 0.5, metalness: 0.2 });
const geomMaterial = new THREE.MeshStandardMaterial({ color: 0x5e9bd6, roughness: 0.6, metalness: 0.1 });
const meshMaterial = new THREE.MeshStandardMaterial({ color: 0x5e9bd6, roughness: 0.6, metalness: 0.1, flatShading: true });
const planeMaterial = new THREE.MeshStandardMaterial({ color: 0x3a4048, roughness: 0.9, side: THREE.DoubleSide, transparent: true, opacity: 0.8 });

// sim quaternions are [w, x, y, z]
const quat = (q) => new THREE.Quaternion(q[1], q[2], q[3], q[0]);

function capsule(radius, halfLength, material) {
  const g = new THREE.Group();
  const cyl = new THREE.Mesh(new THREE.CylinderGeometry(radius, radius, 2 * halfLength, 20), material);
  cyl.rotation.x = Math.PI / 2; // three's cylinder runs along y; the capsule along z
  g.add(cyl);
  for (const s of [-1, 1]) {
    const cap = new THREE.Mesh(new THREE.SphereGeometry(radius, 20, 12), material);
    cap.position.z = s * halfLength;
    g.add(cap);
  }
  return g;
}

// A capsule from point a to point b (in one frame).
function link(a, b, radius) {
  const va = new THREE.Vector3(...a), vb = new THREE.Vector3(...b);
  const len = va.distanceTo(vb);
  if (len < 1e-6) return null;
  const c = capsule(radius, len / 2, linkMaterial);
  c.position.copy(va.clone().add(vb).multiplyScalar(0.5));
  c.quaternion.setFromUnitVectors(new THREE.Vector3(0, 0, 1), vb.clone().sub(va).normalize());
  return c;
}

// A mesh geom: its convex hull (the shape the simulator collides with), as the model sends it.
function hull(g) {
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute("position", new THREE.Float32BufferAttribute(g.vertices, 3));
  geometry.setIndex(g.faces);
  geometry.computeVertexNormals();
  const mesh = new THREE.Mesh(geometry, meshMaterial);
  A.meshes.push(mesh);
  return mesh;
}

// A plane: its z = 0 where the model puts it, a square with a grid on it (2 m, or its size).
function plane(g) {
  const w = g.size[0] > 0 ? 2 * g.size[0] : 2, h = g.size[1] > 0 ? 2 * g.size[1] : 2;
  const group = new THREE.Group();
  group.add(new THREE.Mesh(new THREE.PlaneGeometry(w, h), planeMaterial));
  const grid = new THREE.GridHelper(Math.max(w, h), 20, 0x4a5561, 0x2f3740);
  grid.rotation.x = Math.PI / 2; // three's grid lies in x-z; the plane is the frame's x-y
  grid.position.z = 0.0005; // just above the surface, so that it shows
  group.add(grid);
  A.planes.push(group);
  return group;
}

function geomMesh(g) {
  let mesh;
  if (g.type === "plane") {
    mesh = plane(g);
  } else if (g.type === "sphere") {
    mesh = new THREE.Mesh(new THREE.SphereGeometry(g.size[0], 24, 16), geomMaterial);
  } else if (g.type === "capsule") {
    mesh = capsule(g.size[0], g.size[1], geomMaterial);
  } else if (g.type === "cylinder") {
    mesh = new THREE.Group();
    const cyl = new THREE.Mesh(new THREE.CylinderGeometry(g.size[0], g.size[0], 2 * g.size[1], 24), geomMaterial);
    cyl.rotation.x = Math.PI / 2; // three's cylinder runs along y, ours along z
    mesh.add(cyl);
  } else if (g.type === "mesh") {
    mesh = g.vertices && g.faces && g.faces.length ? hull(g) : new THREE.Group();
  } else {
    mesh = new THREE.Mesh(new THREE.BoxGeometry(2 * g.size[0], 2 * g.size[1], 2 * g.size[2]), geomMaterial);
  }
  mesh.position.set(...g.pos);
  mesh.quaternion.copy(quat(g.quat));
  return mesh;
}

// Frames the robot: the camera looks at the centre of its bounding box from the usual direction,
// far enough that the whole box fits the canvas (the narrower of the two fields of view).
function frameModel() {
  const box = new THREE.Box3().setFromObject(robot);
  if (box.isEmpty()) return false;
  const sphere = box.getBoundingSphere(new THREE.Sphere());
  const r = Math.max(sphere.radius, 0.05);
  const vfov = camera.fov * Math.PI / 180;
  const hfov = 2 * Math.atan(Math.tan(vfov / 2) * camera.aspect);
  const dist = 1.1 * r / Math.sin(Math.min(vfov, hfov) / 2);
  const dir = new THREE.Vector3(0.75, -0.8, 0.6).normalize();
  camera.position.copy(sphere.center).addScaledVector(dir, dist);
  camera.near = dist / 100, camera.far = dist * 100;
  camera.updateProjectionMatrix();
  controls.target.copy(sphere.center);
  controls.update();
  camera.updateMatrixWorld(); // what a projection reads before the next drawing
  dirty = true;
  return true;
}
A.frameModel = frameModel;

// A replay (achilles replay FILE --view): a log holds no robot model, so there is no arm to draw,
// and a replay cannot be paused, stepped, reset or tuned (those requests get an error reply).
function onReplayModel(m) {
  const note = document.createElement("div");
  note.id = "no-model";
  note.textContent = `replay of ${m.replay.file}: a log holds no robot model, so no arm is drawn; ` +
    "the plots and the status show what the replay sends";
  document.getElementById("scene").appendChild(note);
  for (const id of ["step", "step-n", "reset", "tune-sensor", "tune-path", "tune-value", "tune-get", "tune-set", "frame"]) {
    const e = document.getElementById(id);
    e.disabled = true;
    e.title = "not available in a replay";
  }
}

function onModel(m) {
  A.model = m;
  document.getElementById("model").textContent = m.replay ? `${m.name} (replay)` : m.name;
  if (m.replay) onReplayModel(m);
  for (const b of m.bodies) {
    const group = new THREE.Group();
    bodyGroups.push(group);
    robot.add(group);
  }
  const hasGeom = new Set(m.geoms.filter((g) => g.type !== "plane").map((g) => g.body));
  for (const g of m.geoms) {
    const mesh = geomMesh(g);
    if (g.type === "plane") { // on the world body (which never moves), apart from what is framed
      scene.add(mesh);
    } else {
      bodyGroups[g.body].add(mesh);
    }
  }
  // links: from each body's origin to its children's origins (or to twice its centre of mass
  // for a leaf), for bodies without collision geometry
  const children = m.bodies.map(() => []);
  m.bodies.forEach((b, i) => { if (b.parent >= 0) children[b.parent].push(i); });
  m.bodies.forEach((b, i) => {
    if (hasGeom.has(i)) return;
    const ends = children[i].map((c) => m.bodies[c].pos);
    if (i > 0 && ends.length === 0) ends.push(b.com.map((x) => 2 * x));
    for (const e of ends) {
      const l = link([0, 0, 0], e, 0.02);
      if (l) bodyGroups[i].add(l);
    }
  });
  for (const j of m.joints) {
    if (j.type === "fixed") continue;
    const arrow = new THREE.ArrowHelper(new THREE.Vector3(...j.axis).normalize(), new THREE.Vector3(), 0.12,
      j.type === "hinge" ? 0x7fd17f : 0xd17fd1, 0.03, 0.015);
    bodyGroups[j.body].add(arrow);
  }
  buildPlots(m);
  dirty = true;
  A.ready = true;
}

function setContacts(contacts) {
  while (contactPool.length < contacts.length) {
    const g = new THREE.Group();
    g.add(new THREE.Mesh(new THREE.SphereGeometry(0.01, 12, 8), new THREE.MeshBasicMaterial({ color: 0xff4040 })));
    const arrow = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 0.1, 0xff4040, 0.02, 0.012);
    g.add(arrow);
    g.userData.arrow = arrow;
    scene.add(g);
    contactPool.push(g);
  }
  contactPool.forEach((g, i) => {
    g.visible = i < contacts.length;
    if (!g.visible) return;
    const c = contacts[i];
    g.position.set(c[0], c[1], c[2]);
    const len = Math.min(0.4, Math.max(0.02, 0.01 * c[6])); // 1 cm per newton
    g.userData.arrow.setDirection(new THREE.Vector3(c[3], c[4], c[5]).normalize());
    g.userData.arrow.setLength(len, 0.02, 0.012);
  });
}

function resize() {
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== Math.floor(w * renderer.getPixelRatio()) || canvas.height !== Math.floor(h * renderer.getPixelRatio())) {
    renderer.setSize(w, h, false);
    camera.aspect = w / Math.max(h, 1);
    camera.updateProjectionMatrix();
    return true;
  }
  return false;
}

// Draws only when something changed (a pose or a contact, the camera, the window): software GL
// (a browser without a GPU) would otherwise spend a CPU on redrawing a still picture.
let dirty = true, framed = false;
controls.addEventListener("change", () => { dirty = true; });
window.addEventListener("resize", () => { dirty = true; });
function render() {
  if (resize()) dirty = true;
  if (!framed && A.frame && A.model && !A.model.replay) framed = A.framed = frameModel();
  if (dirty) {
    dirty = false;
    renderer.render(scene, camera);
    A.renders = (A.renders || 0) + 1;
  }
  requestAnimationFrame(render);
}
requestAnimationFrame(render);
A.redraw = () => { dirty = true; };
document.getElementById("frame").onclick = () => frameModel();

// --- frames and status -----------------------------------------------------------------------

let lastT = -Infinity, shown = null;

// whether two frames draw the same picture (poses within a micrometre, the same contacts)
function samePicture(a, b) {
  if (!a || a.bodies.length !== b.bodies.length || a.contacts.length !== b.contacts.length) return false;
  const close = (x, y) => x.every((v, i) => Math.abs(v - y[i]) < 1e-6);
  return a.bodies.every((p, i) => close(p, b.bodies[i])) && a.contacts.every((c, i) => close(c, b.contacts[i]));
}

function onFrame(f) {
  if (f.t < lastT) clearPlots(); // a reset: the plots start again
  lastT = f.t;
  A.frame = f;
  A.frames++;
  if (!samePicture(shown, f)) {
    shown = f;
    f.bodies.forEach((p, i) => {
      const g = bodyGroups[i];
      if (!g) return;
      g.position.set(p[0], p[1], p[2]);
      g.quaternion.set(p[4], p[5], p[6], p[3]);
    });
    setContacts(f.contacts);
    dirty = true;
  }
  document.getElementById("clock").textContent =
    `t=${f.t.toFixed(3)} s  steps ${f.steps}${f.paused ? "  (paused)" : ""}`;
  addSamples(f);
}

const us = (s) => (1e6 * s).toFixed(0);

function onStatus(msg) {
  const s = msg.status;
  A.status = s;
  const c = s.commands;
  const rows = [
    ["mode", s.mode + (s.paused ? " (paused)" : "")],
    ["simulated / wall", `${s.t.toFixed(3)} s / ${s.wall_time.toFixed(3)} s`],
    ["steps", s.steps],
    ["late p50 / p99 / max", `${us(s.late_s.p50)} / ${us(s.late_s.p99)} / ${us(s.late_s.max)} µs`],
    ["compute p50 / p99", `${us(s.compute_s.p50)} / ${us(s.compute_s.p99)} µs`],
    ["overruns / skipped", `${s.overruns} / ${s.skipped}`],
    ["commands accepted / clamped", `${c.accepted} / ${c.clamped}`],
    ["rejected (nonfinite / unknown / malformed)", `${c.rejected_nonfinite} / ${c.rejected_unknown} / ${c.rejected_malformed}`],
    ["watchdog trips", c.watchdog_trips],
    ["contacts / constraint rows", `${s.constraints.contacts} / ${s.constraints.rows}`],
  ];
  if (s.replay) { // a replay's figures: its position and timing, what it sent
    const r = s.replay;
    rows.splice(0, rows.length,
      ["replay", `${r.file}${r.finished ? " (finished)" : ""}`],
      ["position", `${r.played} / ${r.total} samples, pass ${r.pass}`],
      ["replayed / wall", `${s.t.toFixed(3)} s / ${s.wall_time.toFixed(3)} s`],
      ["steps / instants", `${s.steps} / ${r.instants}`],
      ["timing error p50 / p99 / max", `${us(s.late_s.p50)} / ${us(s.late_s.p99)} / ${us(s.late_s.max)} µs`],
      ["instants late > 1 ms", s.overruns],
      ["messages sent / failed", `${r.messages} / ${r.send_failed}`],
      ["control requests / commands discarded", `${r.ctl_requests} / ${r.cmd_messages}`]);
  }
  const body = document.querySelector("#status tbody");
  body.innerHTML = "";
  for (const [k, v] of rows) {
    const tr = body.insertRow();
    tr.insertCell().textContent = k;
    tr.insertCell().textContent = v;
  }
  document.getElementById("transports").textContent = msg.transports.join("\n");
}

// --- plots ----------------------------------------------------------------------------------------

let windowS = 10;
let plotsPaused = false;
const palette = ["#5e9bd6", "#d08c3c", "#7fd17f", "#d17fd1", "#d1d17f", "#7fd1d1"];

// One chart per sensor (an IMU: one for the gyro, one for the accelerometer): each channel
// measured (solid) and true (dashed), and their difference (dotted, right axis). An encoder
// shows its angle, or its counts when it has no angle channel (the wrist's counts-only encoder).
function chartGroups(sensor) {
  const ch = sensor.channels;
  if (sensor.type === "encoder") return [ch.includes("angle") ? ["angle"] : ch.includes("counts") ? ["counts"] : ch];
  if (sensor.type === "imu") return [ch.filter((c) => c.startsWith("gyro")), ch.filter((c) => c.startsWith("accel"))];
  return [ch];
}

// Tick labels with at most four significant digits (a constant 0.001770418660 reads 0.00177).
const tick = (v) => (v === 0 ? "0" : Number(Number(v).toPrecision(4)).toString());

// A scale whose data hardly varies gets a span of its own (5 % of its value, at least 1e-3 of its
// unit), so that Chart.js does not draw ticks a billionth apart.
function span(scale, values) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  const mid = (lo + hi) / 2, d = Math.max(Math.abs(mid) * 0.05, 1e-3);
  const flat = Number.isFinite(mid) && hi - lo < d / 10;
  scale.suggestedMin = flat ? mid - d : undefined; // suggested: Chart.js still picks round ticks
  scale.suggestedMax = flat ? mid + d : undefined;
}

function axis(title, color, extra = {}) {
  return { ticks: { color, maxTicksLimit: 5, callback: tick }, grid: { color: "#2c333b" },
    title: { display: true, text: title, color, font: { size: 10 } }, ...extra };
}

function buildPlots(m) {
  windowS = m.window_s || 10;
  document.getElementById("plots-window").value = String(windowS);
  const box = document.getElementById("plots");
  for (const s of m.sensors) {
    for (const channels of chartGroups(s)) {
      if (!channels.length) continue;
      const title = document.createElement("div");
      title.className = "plot-title";
      const unit = s.units[s.channels.indexOf(channels[0])];
      title.textContent = `${s.topic}: ${channels.join(", ")} (${unit})`;
      const div = document.createElement("div");
      div.className = "plot";
      const cv = document.createElement("canvas");
      div.appendChild(cv);
      box.appendChild(title);
      box.appendChild(div);
      const datasets = [];
      channels.forEach((ch, i) => {
        const color = palette[i % palette.length];
        datasets.push({ label: `${ch}`, data: [], borderColor: color, borderWidth: 1.2, pointRadius: 0, yAxisID: "y" });
        datasets.push({ label: `${ch} truth`, data: [], borderColor: color, borderDash: [4, 3], borderWidth: 1, pointRadius: 0, yAxisID: "y" });
        datasets.push({ label: `${ch} error`, data: [], borderColor: "#e05050", borderDash: [1, 2], borderWidth: 1, pointRadius: 0, yAxisID: "err" });
      });
      const name = channels.length === 1 ? channels[0] : s.type === "imu" ? channels[0].split(".")[0] : "value";
      const chart = new Chart(cv, {
        type: "line",
        data: { datasets },
        options: {
          animation: false, parsing: false, normalized: true, maintainAspectRatio: false,
          plugins: { legend: { labels: { color: "#8fa0b3", boxWidth: 10, font: { size: 10 } } } },
          scales: {
            x: axis("time (s)", "#8fa0b3", { type: "linear" }),
            y: axis(`${name} (${unit})`, "#8fa0b3"),
            err: axis(`error (${unit})`, "#e05050", { position: "right", grid: { display: false } }),
          },
        },
      });
      chart.options.scales.x.ticks.maxTicksLimit = 6;
      cv.addEventListener("wheel", (ev) => { // zoom: the wheel narrows or widens the window
        ev.preventDefault();
        windowS = Math.min(600, Math.max(0.2, windowS * (ev.deltaY > 0 ? 1.25 : 0.8)));
        plotsChanged = true;
      }, { passive: false });
      A.charts.push({ chart, sensor: s, channels, index: channels.map((c) => s.channels.indexOf(c)), changed: false });
    }
  }
}

A.points = () => A.charts.reduce((n, c) => n + c.chart.data.datasets[0].data.length, 0);

function addSamples(f) {
  for (const c of A.charts) {
    const meas = f.samples[c.sensor.topic], truth = f.samples[c.sensor.truth_topic];
    if (!meas || !meas.valid) continue;
    const ds = c.chart.data.datasets;
    const last = ds[0].data[ds[0].data.length - 1];
    if (last && last.x === meas.t) continue; // no new sample since the last frame
    c.channels.forEach((ch, i) => {
      const m = meas.values[ch];
      ds[3 * i].data.push({ x: meas.t, y: m });
      if (truth) { // a replayed file may have no truth
        ds[3 * i + 1].data.push({ x: truth.t, y: truth.values[ch] });
        ds[3 * i + 2].data.push({ x: meas.t, y: m - truth.values[ch] });
      }
    });
    c.changed = true;
  }
}

function clearPlots() {
  for (const c of A.charts) {
    for (const d of c.chart.data.datasets) d.data.length = 0;
    c.changed = true;
  }
}

// Charts are redrawn ten times a second at most, and only those with new points (or a new
// window): cheaper for slow machines, nothing for a still arm.
let plotsChanged = false;
setInterval(() => {
  if (plotsPaused) return;
  for (const c of A.charts) {
    if (!c.changed && !plotsChanged) continue;
    c.changed = false;
    const ds = c.chart.data.datasets;
    const n = ds[0].data.length;
    if (!n) continue;
    const tmax = ds[0].data[n - 1].x;
    for (const d of ds) {
      let k = 0;
      while (k < d.data.length && d.data[k].x < tmax - windowS) k++;
      if (k) d.data.splice(0, k);
    }
    c.chart.options.scales.x.min = Math.max(ds[0].data[0].x, tmax - windowS);
    c.chart.options.scales.x.max = tmax;
    span(c.chart.options.scales.y, ds.filter((d) => d.yAxisID === "y").flatMap((d) => d.data.map((p) => p.y)));
    span(c.chart.options.scales.err, ds.filter((d) => d.yAxisID === "err").flatMap((d) => d.data.map((p) => p.y)));
    c.chart.update("none");
    A.chartUpdates = (A.chartUpdates || 0) + 1;
  }
  plotsChanged = false;
}, 100);

document.getElementById("plots-pause").onchange = (ev) => { plotsPaused = ev.target.checked; };
document.getElementById("plots-window").onchange = (ev) => { windowS = Number(ev.target.value); plotsChanged = true; };

// --- controls ---------------------------------------------------------------------------------

const show = (r) => { document.getElementById("reply").textContent = JSON.stringify(r); return r; };
document.getElementById("pause").onclick = () => A.request({ cmd: "pause" }).then(show);
document.getElementById("resume").onclick = () => A.request({ cmd: "resume" }).then(show);
document.getElementById("reset").onclick = () => A.request({ cmd: "reset" }).then(show);
document.getElementById("step").onclick = () =>
  A.request({ cmd: "step", n: Math.max(1, Number(document.getElementById("step-n").value) || 1) }).then(show);

function tuneRequest(cmd) {
  const req = { cmd, sensor: document.getElementById("tune-sensor").value, path: document.getElementById("tune-path").value };
  if (cmd === "set_param") req.value = Number(document.getElementById("tune-value").value);
  return A.request(req).then((r) => {
    show(r);
    if (r.ok && typeof r.value === "number") document.getElementById("tune-value").value = r.value;
  });
}
document.getElementById("tune-get").onclick = () => tuneRequest("get_param");
document.getElementById("tune-set").onclick = () => tuneRequest("set_param");

function onHello(h) {
  if (!h || !h.ok) return; // a replay answers only status and latest
  const sel = document.getElementById("tune-sensor");
  for (const s of h.sensors || []) {
    const o = document.createElement("option");
    o.textContent = s.name;
    sel.appendChild(o);
  }
  for (const id of ["step", "step-n"]) { // steps are granted in lockstep only
    const e = document.getElementById(id);
    e.disabled = h.mode !== "lockstep";
    e.title = e.disabled ? `Step works in lockstep mode (this run: ${h.mode})` : "steps per click";
  }
}

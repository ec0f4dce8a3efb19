/* tests/sim/test_mesh.c: mesh geoms (sim/mesh.c, sim/collision_convex.c).
 *
 * The STL reader on files the test writes (a cube, binary and ASCII: its hull is the 8 corners)
 * and on damaged ones (truncated, garbage, bad numbers, a flat mesh, random cuts and flips:
 * refused with the file named, never a crash); a mesh cube against a plane beside the box of the
 * same size; then the KR5's STL meshes (dart-doc) against MuJoCo 2.2.2 loading the same files:
 * the hull's vertex set, and contacts with a plane and with every other shape on random poses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/collision.h"
#include "sim/mesh.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/mujoco.h"
#include "support/numbers.h"
#include "support/skip.h"
#include "support/tmp.h"

#define KR5_MESHES "/usr/share/doc/dart/data/urdf/KR5/meshes"


/* the 12 triangles of the box ±h, outward (counter-clockwise seen from outside) */
static void cube_triangles(float tri[12][9], const double h[3]) {
  static const int faces[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                  {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (int f = 0; f < 6; f++) {
    const int quad[2][3] = {{faces[f][0], faces[f][1], faces[f][2]},
                            {faces[f][0], faces[f][2], faces[f][3]}};
    for (int t = 0; t < 2; t++) {
      for (int v = 0; v < 3; v++) {
        const int c = quad[t][v];
        tri[2 * f + t][3 * v + 0] = (float)(c & 1 ? h[0] : -h[0]);
        tri[2 * f + t][3 * v + 1] = (float)(c & 2 ? h[1] : -h[1]);
        tri[2 * f + t][3 * v + 2] = (float)(c & 4 ? h[2] : -h[2]);
      }
    }
  }
}

static void put_u32(unsigned char *p, uint32_t v) {
  for (int k = 0; k < 4; k++) {
    p[k] = (unsigned char)(v >> (8 * k));
  }
}

/* binary STL of triangles into buf; returns its size */
static size_t binary_stl(unsigned char *buf, float (*tri)[9], int n) {
  memset(buf, 0, 84);
  memcpy(buf, "binary cube written by test_mesh", 32);
  put_u32(buf + 80, (uint32_t)n);
  for (int t = 0; t < n; t++) {
    unsigned char *p = buf + 84 + 50 * t;
    memset(p, 0, 50);
    for (int k = 0; k < 9; k++) {
      uint32_t bits;
      memcpy(&bits, &tri[t][k], 4);
      put_u32(p + 12 + 4 * k, bits);
    }
  }
  return 84 + 50 * (size_t)n;
}

static size_t ascii_stl(char *buf, size_t cap, float (*tri)[9], int n) {
  size_t len = (size_t)snprintf(buf, cap, "solid cube\n");
  for (int t = 0; t < n; t++) {
    len += (size_t)snprintf(buf + len, cap - len, "  facet normal 0 0 0\n    outer loop\n");
    for (int v = 0; v < 3; v++) {
      len += (size_t)snprintf(buf + len, cap - len, "      vertex %.9g %.9g %.9g\n",
                              (double)tri[t][3 * v], (double)tri[t][3 * v + 1],
                              (double)tri[t][3 * v + 2]);
    }
    len += (size_t)snprintf(buf + len, cap - len, "    endloop\n  endfacet\n");
  }
  len += (size_t)snprintf(buf + len, cap - len, "endsolid cube\n");
  return len;
}

/* every hull vertex is a corner ±h, each corner once; every vertex has 3 or more neighbours */
static void check_cube_hull(const sim_hull *h, const double half[3]) {
  assert_int_equal(h->nvert, 8);
  int seen = 0;
  for (int i = 0; i < 8; i++) {
    const double *v = h->vert + 3 * i;
    int corner = 0;
    for (int k = 0; k < 3; k++) {
      assert_true(fabs(fabs(v[k]) - half[k]) < 1e-7 * half[k]);
      corner |= (v[k] > 0) << k;
    }
    assert_false(seen & (1 << corner));
    seen |= 1 << corner;
    int nb = 0;
    for (int e = h->graph[i]; h->graph[8 + e] >= 0; e++) {
      assert_true(h->graph[8 + e] < 8 && h->graph[8 + e] != i);
      nb++;
    }
    assert_true(nb >= 3);
  }
  for (int k = 0; k < 3; k++) {
    assert_true(fabs(h->center[k]) < 1e-9);
  }
  const double r = sqrt(half[0] * half[0] + half[1] * half[1] + half[2] * half[2]);
  assert_true(fabs(h->rbound - r) < 1e-7 && fabs(h->rbound_center - r) < 1e-7);
}

static void test_cube_hull(void **state) {
  (void)state;
  const double half[3] = {0.1, 0.05, 0.2}, one[3] = {1, 1, 1}, twice[3] = {2, -2, 2};
  float tri[12][9];
  cube_triangles(tri, half);
  unsigned char bin[84 + 50 * 12];
  static char text[8192];
  char path[300], err[512];
  sim_hull h;
  ts_tmp_path(path, sizeof path, "cube.stl");
  ts_write_bytes(path, bin, binary_stl(bin, tri, 12));
  assert_int_equal(sim_hull_from_stl(&h, path, one, err, sizeof err), 0);
  check_cube_hull(&h, half);
  sim_hull_free(&h);
  ts_tmp_path(path, sizeof path, "cube_ascii.stl");
  ts_write_bytes(path, text, ascii_stl(text, sizeof text, tri, 12));
  assert_int_equal(sim_hull_from_stl(&h, path, one, err, sizeof err), 0);
  check_cube_hull(&h, half);
  sim_hull_free(&h);
  /* scaled (a mirror included): the corners scale */
  assert_int_equal(sim_hull_from_stl(&h, path, twice, err, sizeof err), 0);
  const double doubled[3] = {0.2, 0.1, 0.4};
  check_cube_hull(&h, doubled);
  sim_hull_free(&h);
  /* a point inside the cube changes nothing */
  float extra[13][9];
  memcpy(extra, tri, sizeof tri);
  for (int k = 0; k < 9; k++) {
    extra[12][k] = (float)(0.01 * (k % 3));
  }
  ts_tmp_path(path, sizeof path, "cube_inner.stl");
  ts_write_bytes(path, text, ascii_stl(text, sizeof text, extra, 13));
  assert_int_equal(sim_hull_from_stl(&h, path, one, err, sizeof err), 0);
  check_cube_hull(&h, half);
  sim_hull_free(&h);
}

/* CAD exports of hobby arms have hulls of thousands of vertices (the SO-101's largest link:
 * 4 880): a sphere tessellated into 9 902 vertices, every one on its hull, keeps them all, and
 * its farthest point along any axis is the sphere's radius. */
static void test_fine_hull(void **state) {
  (void)state;
  enum { LAT = 100, LON = 100 };
  const double r = 0.125, pi = 3.14159265358979323846;
  static float v[(LAT - 1) * LON + 2][3];
  int nv = 0;
  v[nv][0] = 0, v[nv][1] = 0, v[nv++][2] = (float)r;
  for (int i = 1; i < LAT; i++) {
    for (int k = 0; k < LON; k++, nv++) {
      const double th = pi * i / LAT, ph = 2 * pi * k / LON;
      v[nv][0] = (float)(r * sin(th) * cos(ph));
      v[nv][1] = (float)(r * sin(th) * sin(ph));
      v[nv][2] = (float)(r * cos(th));
    }
  }
  v[nv][0] = 0, v[nv][1] = 0, v[nv++][2] = (float)-r;
  /* a fan of triangles over every vertex: the reader takes the vertex set, not the surface */
  const int ntri = (nv + 2) / 3;
  float *tri = calloc((size_t)ntri * 9, sizeof *tri);
  assert_non_null(tri);
  for (int t = 0; t < 3 * ntri; t++) {
    memcpy(tri + 3 * t, v[t < nv ? t : nv - 1], 3 * sizeof(float));
  }
  sim_hull h;
  char err[512];
  const double one[3] = {1, 1, 1};
  if (sim_hull_build(&h, tri, ntri, one, "sphere", err, sizeof err) != 0) {
    fail_msg("%s", err);
  }
  print_message("tessellated sphere: %d distinct vertices, %d on the hull (limit %d)\n", nv,
                h.nvert, SIM_HULL_VERT_MAX);
  assert_int_equal(h.nvert, nv);
  assert_true(h.nvert > 4096);
  double top = 0;
  for (int i = 0; i < h.nvert; i++) {
    top = fmax(top, h.vert[3 * i + 2]);
  }
  assert_true(fabs(top - r) < 1e-7);
  sim_hull_free(&h);
  free(tri);
}

/* parse must fail with a message naming the file and containing `what` */
static void refused(const void *data, size_t n, const char *what) {
  float *vert = (float *)1;
  int ntri = -1;
  char err[512] = "";
  int rc = sim_stl_parse(&vert, &ntri, data, n, "bad.stl", err, sizeof err);
  if (rc == 0) { /* the reader may accept it; the hull must then refuse */
    sim_hull h;
    const double one[3] = {1, 1, 1};
    rc = sim_hull_build(&h, vert, ntri, one, "bad.stl", err, sizeof err);
    free(vert);
    if (rc == 0) {
      sim_hull_free(&h);
    }
  } else {
    assert_null(vert);
  }
  print_message("  refused: %s\n", err);
  assert_int_equal(rc, -1);
  assert_non_null(strstr(err, "bad.stl"));
  assert_non_null(strstr(err, what));
}

static void test_damaged_files(void **state) {
  (void)state;
  const double half[3] = {0.1, 0.1, 0.1};
  float tri[12][9];
  cube_triangles(tri, half);
  static unsigned char bin[84 + 50 * 12];
  static char text[8192];
  const size_t nbin = binary_stl(bin, tri, 12), ntext = ascii_stl(text, sizeof text, tri, 12);
  refused(bin, 0, "not an STL file");
  refused(bin, 50, "not an STL file");
  refused(bin, nbin - 1, "header counts 12 triangles");
  refused("garbage that is not a mesh at all, long enough to have a header of eighty-four bytes"
          "............", 96, "not an STL file");
  refused(text, ntext - 15, "ends inside a solid"); /* no endsolid */
  refused(text, 60, "expected");                    /* cut inside a facet */
  char bad[8192];
  memcpy(bad, text, ntext + 1);
  char *v = strstr(bad, "vertex") + 7;
  memcpy(v, "nan", 3);
  refused(bad, ntext, "finite number");
  memcpy(bad, text, ntext + 1);
  memcpy(strstr(bad, "outer"), "outre", 5);
  refused(bad, ntext, "expected \"outer\"");
  float flat[12][9]; /* every z zero: no solid */
  memcpy(flat, tri, sizeof tri);
  for (int t = 0; t < 12; t++) {
    flat[t][2] = flat[t][5] = flat[t][8] = 0;
  }
  unsigned char fbin[sizeof bin];
  refused(fbin, binary_stl(fbin, flat, 12), "no convex hull");
  float inf_tri[12][9];
  memcpy(inf_tri, tri, sizeof tri);
  inf_tri[3][4] = (float)INFINITY;
  refused(fbin, binary_stl(fbin, inf_tri, 12), "finite number");
  refused(fbin, binary_stl(fbin, tri, 1), "distinct vertices");
}

/* random cuts and byte flips of both cube files: accepted (a cube, or another solid) or refused
 * with the file named, never a crash (run under the sanitizer build too) */
static void test_fuzzed_files(void **state) {
  (void)state;
  const double half[3] = {0.1, 0.2, 0.3}, one[3] = {1, 1, 1};
  float tri[12][9];
  cube_triangles(tri, half);
  static unsigned char orig[2][8192], buf[8192];
  size_t n[2];
  n[0] = binary_stl(orig[0], tri, 12);
  n[1] = ascii_stl((char *)orig[1], sizeof orig[1], tri, 12);
  uint64_t s = 0x243f6a8885a308d3ull;
  int accepted = 0, rejected = 0;
  for (int round = 0; round < 4000; round++) {
    const int which = round % 2;
    size_t len = n[which];
    memcpy(buf, orig[which], len);
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    if (s % 3 == 0) {
      len = (size_t)(s >> 20) % (len + 1);
    }
    for (int flips = (int)((s >> 8) % 4); flips > 0; flips--) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      if (len > 0) {
        buf[(s >> 16) % len] = (unsigned char)(s >> 40);
      }
    }
    float *vert = NULL;
    int ntri = 0;
    char err[512] = "";
    int rc = sim_stl_parse(&vert, &ntri, buf, len, "fuzz.stl", err, sizeof err);
    if (rc == 0) {
      sim_hull h;
      rc = sim_hull_build(&h, vert, ntri, one, "fuzz.stl", err, sizeof err);
      if (rc == 0) {
        assert_true(h.nvert >= 4 && h.nvert <= 3 * ntri);
        sim_hull_free(&h);
      }
      free(vert);
    }
    if (rc) {
      assert_non_null(strstr(err, "fuzz.stl"));
    }
    (rc ? &rejected : &accepted)[0]++;
  }
  print_message("4000 damaged cube files: %d accepted, %d refused with a message\n", accepted,
                rejected);
  assert_true(accepted > 100 && rejected > 100);
}

/* a model: a body of mass 2 on a free joint (or a slide) holding `geom`, above a floor */
static sim_model *one_body(const char *geom, const char *joint, double z) {
  char json[2048];
  snprintf(json, sizeof json,
           "{ \"timestep\": 0.001, \"bodies\": [ { \"name\": \"b\", \"parent\": \"world\","
           " \"pos\": [0, 0, %.17g], \"joint\": { \"name\": \"j\", %s },"
           " \"inertial\": { \"mass\": 2, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } } ],"
           " \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },"
           " { \"name\": \"g\", \"body\": \"b\", %s } ] }",
           z, joint, geom);
  return ts_model_in(json, ts_tmp_dir());
}

/* The cube's mesh and the box of the same size on a floor, tilted on random attitudes: the
 * deepest contact is the same corner with the same distance (the mesh stops at 3 contacts, the
 * box at 4); resting flat on a vertical slide, both carry the weight. */
static void test_mesh_cube_as_box(void **state) {
  (void)state;
  const double half[3] = {0.125, 0.0625, 0.25}; /* exact in float, as STL stores them */
  float tri[12][9];
  cube_triangles(tri, half);
  unsigned char bin[84 + 50 * 12];
  char path[300];
  ts_tmp_path(path, sizeof path, "box.stl");
  ts_write_bytes(path, bin, binary_stl(bin, tri, 12));
  /* the source names tmpdir/…: "box.stl" resolves beside it */
  char geom_mesh[256];
  snprintf(geom_mesh, sizeof geom_mesh, "\"type\": \"mesh\", \"file\": \"%s/box.stl\"",
           ts_tmp_dir());
  const char *geom_box = "\"type\": \"box\", \"size\": [0.125, 0.0625, 0.25]";
  sim_model *mm = one_body(geom_mesh, "\"type\": \"free\"", 0.15);
  sim_model *mb = one_body(geom_box, "\"type\": \"free\"", 0.15);
  assert_int_equal(mm->geoms[1].hull_nvert, 8);
  sim_data *dm = sim_data_new(mm), *db = sim_data_new(mb);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  int poses = 0;
  double e = 0;
  for (int k = 0; k < 300; k++) {
    double q[4], nq = 0;
    for (int i = 0; i < 4; i++) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      q[i] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
      nq += q[i] * q[i];
    }
    dm->qpos[2] = db->qpos[2] = 0.05 + 0.15 * (double)(k % 10) / 10;
    for (int i = 0; i < 4; i++) {
      dm->qpos[3 + i] = db->qpos[3 + i] = q[i] / sqrt(nq);
    }
    sim_kinematics(mm, dm);
    sim_kinematics(mb, db);
    sim_collide(mm, dm);
    sim_collide(mb, db);
    assert_int_equal(dm->ncon > 0, db->ncon > 0);
    if (dm->ncon == 0) {
      continue;
    }
    poses++;
    int deepest = 0;
    for (int c = 1; c < db->ncon; c++) {
      deepest = db->con_dist[c] < db->con_dist[deepest] ? c : deepest;
    }
    assert_true(dm->ncon <= 3 && dm->ncon <= db->ncon);
    e = fmax(e, fabs(dm->con_dist[0] - db->con_dist[deepest]));
    for (int i = 0; i < 3; i++) {
      e = fmax(e, fabs(dm->con_pos[i] - db->con_pos[3 * deepest + i]));
    }
  }
  print_message("mesh cube and box on the floor: %d touching poses of 300, deepest contact "
                "differs by %.2g\n", poses, e);
  assert_true(poses > 100);
  assert_true(e <= 1e-15);
  sim_data_free(dm);
  ts_sim_free(mm, db);
  sim_model_free(mb);
  /* resting: the weight is carried */
  const char *slide = "\"type\": \"slide\", \"axis\": [0, 0, 1], \"damping\": 20";
  for (int which = 0; which < 2; which++) {
    sim_model *m = one_body(which ? geom_box : geom_mesh, slide, 0.2);
    sim_data *d = sim_data_new(m);
    ts_steps(m, d, 3000);
    const double normal = ts_normal_force(m, d);
    print_message("resting %s: %d contacts, %.9g N (m·g %.9g N), height %.6g\n",
                  which ? "box" : "mesh cube", d->ncon, normal, 2 * 9.81, d->qpos[0]);
    assert_int_equal(d->ncon, which ? 4 : 3);
    assert_true(fabs(normal - 2 * 9.81) <= 1e-6 * 2 * 9.81);
    ts_sim_free(m, d);
  }
}

/* a mesh geom's file resolves beside the robot file; what is wrong is said with the JSON path */
static void test_mesh_geom_errors(void **state) {
  (void)state;
  char json[1024], err[512], source[300];
  ts_tmp_path(source, sizeof source, "robot.json");
  static const char *const geoms[][2] = {
      {"\"type\": \"mesh\", \"file\": \"missing.stl\"", "missing.stl: cannot open"},
      {"\"type\": \"mesh\"", "geoms[1].file: missing"},
      {"\"type\": \"mesh\", \"file\": \"box.stl\", \"size\": [1]", "(use \"scale\")"},
      {"\"type\": \"mesh\", \"file\": \"box.stl\", \"scale\": [1, 0, 1]", "non-zero"},
      {"\"type\": \"sphere\", \"size\": [0.1], \"file\": \"box.stl\"", "only a \"mesh\""},
  };
  for (size_t k = 0; k < sizeof geoms / sizeof geoms[0]; k++) {
    snprintf(json, sizeof json,
             "{ \"bodies\": [ { \"name\": \"b\", \"parent\": \"world\","
             " \"joint\": { \"name\": \"j\", \"type\": \"free\" },"
             " \"inertial\": { \"mass\": 2, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } } ],"
             " \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },"
             " { \"name\": \"g\", \"body\": \"b\", %s } ] }", geoms[k][0]);
    sim_model *m = sim_model_load_string(json, source, err, sizeof err);
    print_message("  %s\n", err);
    assert_null(m);
    assert_non_null(strstr(err, geoms[k][1]));
  }
  /* relative to the source's directory: box.stl (written by test_mesh_cube_as_box) loads */
  snprintf(json, sizeof json,
           "{ \"bodies\": [ { \"name\": \"b\", \"parent\": \"world\","
           " \"joint\": { \"name\": \"j\", \"type\": \"free\" },"
           " \"inertial\": { \"mass\": 2, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } } ],"
           " \"geoms\": [ { \"name\": \"g\", \"body\": \"b\", \"type\": \"mesh\", \"file\": \"box.stl\","
           " \"scale\": [2, 2, 2] } ] }");
  sim_model *m = ts_model_in(json, source);
  assert_true(fabs(m->geoms[0].rbound - 2 * sqrt(0.125 * 0.125 + 0.0625 * 0.0625 + 0.0625)) <
              1e-12);
  sim_model_free(m);
}

#if ACHILLES_HAVE_MUJOCO

/* MuJoCo's model of a scene that names mesh files (read from the suite folder) */
static mjModel *load_mujoco(const char *xml) {
  char path[300];
  ts_tmp_path(path, sizeof path, "scene.xml");
  ts_write_file(path, xml);
  return ts_mj_load(path);
}

/* MuJoCo's hull of a KR5 mesh (its graph's vertices, in the mesh frame it moved to the centroid
 * and principal axes) against ours, mapped back to the file's frame: the same vertex set */
static void compare_hull(const char *file) {
  char xml[1024], path[512], err[512];
  snprintf(path, sizeof path, KR5_MESHES "/%s", file);
  snprintf(xml, sizeof xml,
           "<mujoco><asset><mesh name='m' file='%s'/></asset><worldbody>"
           "<body><freejoint/><geom type='mesh' mesh='m'/></body></worldbody></mujoco>", path);
  mjModel *mm = load_mujoco(xml);
  const double one[3] = {1, 1, 1};
  sim_hull h;
  assert_int_equal(sim_hull_from_stl(&h, path, one, err, sizeof err), 0);
  const int *graph = mm->mesh_graph + mm->mesh_graphadr[0];
  const int nv = graph[0], *globalid = graph + 2 + nv;
  const float *vert = mm->mesh_vert + 3 * mm->mesh_vertadr[0];
  double mat[9];
  mju_quat2Mat(mat, mm->geom_quat); /* MuJoCo's mesh frame in the body (= file) frame */
  double e = 0, ec = 0;
  int same_order = 0;
  for (int i = 0; i < nv; i++) {
    const float *v = vert + 3 * globalid[i];
    double x[3];
    for (int r = 0; r < 3; r++) {
      x[r] = mm->geom_pos[r] + mat[3 * r] * v[0] + mat[3 * r + 1] * v[1] + mat[3 * r + 2] * v[2];
    }
    double best = 1e9;
    if (i < h.nvert) {
      const double *u = h.vert + 3 * i;
      same_order += fabs(u[0] - x[0]) + fabs(u[1] - x[1]) + fabs(u[2] - x[2]) < 1e-6;
    }
    for (int j = 0; j < h.nvert; j++) {
      const double *u = h.vert + 3 * j;
      best = fmin(best, fabs(u[0] - x[0]) + fabs(u[1] - x[1]) + fabs(u[2] - x[2]));
    }
    e = fmax(e, best);
  }
  for (int k = 0; k < 3; k++) {
    ec = fmax(ec, fabs(h.center[k] - mm->geom_pos[k]));
  }
  print_message("%s: hull of %d vertices (MuJoCo %d), farthest vertex %.2g m from ours; "
                "centre differs by %.2g m; %d in the same order\n", file, h.nvert, nv, e, ec,
                same_order);
  assert_int_equal(h.nvert, nv);
  assert_true(e <= 1e-7);
  assert_true(ec <= 1e-9);
  sim_hull_free(&h);
  mj_deleteModel(mm);
}

static void test_hulls_against_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  TS_REQUIRE_FILE("dart-doc", KR5_MESHES "/wrist.STL");
  static const char *const files[] = {"base_link.STL", "shoulder.STL", "bicep.STL", "elbow.STL",
                                      "forearm.STL", "wrist.STL", "palm.STL"};
  for (int k = 0; k < 7; k++) {
    compare_hull(files[k]);
  }
}

/* MuJoCo's and our contacts of one scene (one pair) after placing both bodies at qpos: the
 * largest differences of distance, normal and point into e; counts into *ncon, mismatched
 * counts into *nmiss */
static void compare_scene(double e[3], const mjModel *mm, mjData *md, const sim_model *m,
                          sim_data *d, int first_only, int *ncon, int *nmiss) {
  mj_forward(mm, md);
  for (int i = 0; i < m->nq; i++) {
    d->qpos[i] = md->qpos[i];
  }
  sim_kinematics(m, d);
  sim_collide(m, d);
  const int same = d->ncon == md->ncon;
  *nmiss += !same;
  if (!same && (d->ncon == 0 || md->ncon == 0)) {
    fail_msg("MuJoCo finds %d contacts, we find %d", md->ncon, d->ncon);
  }
  e[0] = e[1] = e[2] = 0;
  for (int c = 0; c < (same && !first_only ? d->ncon : 1); c++) {
    const mjContact *mc = &md->contact[c];
    assert_int_equal(d->con_geom[2 * c], mc->geom1);
    e[0] = fmax(e[0], fabs(d->con_dist[c] - mc->dist));
    for (int i = 0; i < 3; i++) {
      e[1] = fmax(e[1], fabs(d->con_frame[9 * c + i] - mc->frame[i]));
      e[2] = fmax(e[2], fabs(d->con_pos[3 * c + i] - mc->pos[i]));
    }
  }
  *ncon += d->ncon;
}

/* MuJoCo's hull of its first mesh as ours: vertices (doubles of its floats, its mesh frame) and
 * graph; *vert and *graph malloc'ed */
static void mujoco_hull(double **vert, int **graph, int *nvert, const mjModel *mm, int mesh) {
  const int *g = mm->mesh_graph + mm->mesh_graphadr[mesh];
  const int nv = g[0], nf = g[1];
  *vert = malloc(3 * (size_t)nv * sizeof **vert);
  *graph = malloc((size_t)(2 * nv + 3 * nf) * sizeof **graph);
  assert_true(*vert && *graph);
  const float *mv = mm->mesh_vert + 3 * mm->mesh_vertadr[mesh];
  for (int i = 0; i < nv; i++) {
    for (int k = 0; k < 3; k++) {
      (*vert)[3 * i + k] = mv[3 * g[2 + nv + i] + k];
    }
    (*graph)[i] = g[2 + i];
  }
  memcpy(*graph + nv, g + 2 + 2 * nv, (size_t)(nv + 3 * nf) * sizeof **graph);
  *nvert = nv;
}

/* The plane–mesh construction and the general routine alone, on MuJoCo's own hull data
 * (vertices, graph, rbound, pose; its mesh frame's origin is the centre): the same contacts,
 * count and order, to the bit. */
static void narrow_phase_on_mujoco_data(const char *first, int plane, double margin) {
  char xml[1024];
  snprintf(xml, sizeof xml,
           "<mujoco><asset><mesh name='m' file='" KR5_MESHES "/bicep.STL'/></asset><worldbody>"
           "%s%s%s<body><freejoint/><geom type='mesh' mesh='m' margin='%.17g'/></body>"
           "</worldbody></mujoco>",
           plane ? "" : "<body><freejoint/>", first, plane ? "" : "</body>", margin);
  mjModel *mm = load_mujoco(xml);
  mjData *md = mj_makeData(mm);
  double *vert, zero[3] = {0, 0, 0};
  int *graph, nv;
  mujoco_hull(&vert, &graph, &nv, mm, 0);
  uint64_t s = 0x5851f42d4c957f2dull;
  int ncon = 0, nthree = 0;
  double e = 0;
  for (int k = 0; k < 500; k++) {
    for (int body = 0; body < mm->nbody - 1; body++) {
      double q[4] = {ts_uniform(&s, -1, 1), ts_uniform(&s, -1, 1), ts_uniform(&s, -1, 1), ts_uniform(&s, -1, 1)};
      const double nq = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      for (int i = 0; i < 3; i++) {
        md->qpos[7 * body + i] = plane ? ts_uniform(&s, -0.1, 0.25) : ts_uniform(&s, -0.12, 0.12);
      }
      for (int i = 0; i < 4; i++) {
        md->qpos[7 * body + 3 + i] = q[i] / nq;
      }
    }
    mj_forward(mm, md);
    const sim_shape mesh = {.type = SIM_GEOM_MESH, .pos = md->geom_xpos + 3,
                            .mat = md->geom_xmat + 9, .vert = vert, .nvert = nv,
                            .graph = graph, .center = zero};
    const sim_shape other = {.type = mm->geom_type[0] == mjGEOM_BOX        ? SIM_GEOM_BOX
                                     : mm->geom_type[0] == mjGEOM_CYLINDER ? SIM_GEOM_CYLINDER
                                                                           : SIM_GEOM_CAPSULE,
                             .pos = md->geom_xpos, .mat = md->geom_xmat, .size = mm->geom_size};
    sim_contact con[SIM_COLLIDE_MAX];
    const int n = plane ? sim_collide_plane_mesh(con, margin, md->geom_xpos, md->geom_xmat,
                                                 &mesh, mm->geom_rbound[1])
                        : sim_collide_convex(con, margin, &other, &mesh);
    int kept = 0; /* MuJoCo keeps those nearer than the margin */
    for (int c = 0; c < n; c++) {
      if (con[c].dist < margin) {
        con[kept++] = con[c];
      }
    }
    assert_int_equal(kept, md->ncon);
    for (int c = 0; c < kept; c++) {
      e = fmax(e, fabs(con[c].dist - md->contact[c].dist));
      for (int i = 0; i < 3; i++) {
        e = fmax(e, fabs(con[c].pos[i] - md->contact[c].pos[i]));
      }
      for (int i = 0; i < 9; i++) {
        e = fmax(e, fabs(con[c].frame[i] - md->contact[c].frame[i]));
      }
    }
    ncon += kept;
    nthree += kept == 3;
  }
  print_message("%s / bicep.STL (margin %g) on MuJoCo's hull: %d contacts (%d poses with three) "
                "in 500 poses, max difference %.2g\n", plane ? "plane" : first, margin, ncon,
                nthree, e);
  assert_true(ncon > 100 && (!plane || nthree > 20));
  assert_true(e == 0);
  free(vert);
  free(graph);
  ts_mj_free(mm, md);
}

static void test_narrow_phase_on_mujoco_data(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  TS_REQUIRE_FILE("dart-doc", KR5_MESHES "/bicep.STL");
  for (int k = 0; k < 2; k++) { /* without and with a margin (MPR's support inflated) */
    const double margin = k ? 0.02 : 0;
    narrow_phase_on_mujoco_data("<geom name='plane' type='plane' size='0 0 1' "
                                "quat='0.98 0.1 -0.15 0.05'/>", 1, margin);
    narrow_phase_on_mujoco_data("<geom type='box' size='0.05 0.03 0.06'/>", 0, margin);
    narrow_phase_on_mujoco_data("<geom type='cylinder' size='0.04 0.06'/>", 0, margin);
    narrow_phase_on_mujoco_data("<geom type='capsule' size='0.03 0.06'/>", 0, margin);
  }
}

/* The same scene in MJCF and JSON: `first` (a plane in the world, or a shape on a free body)
 * and a KR5 mesh on a free body; random poses; our contacts against MuJoCo's. MuJoCo keeps its
 * vertices as floats in a frame it moves to the mesh's centre and principal axes: they differ
 * from ours by ~1e-8 m. Where the contact is unique that is all the difference; where flat
 * faces meet (a box or a cylinder's cap on a mesh's face, or two meshes' faces) MPR's answer
 * is not unique and such a difference sends it down another path: in those poses (up to
 * out_rate of them) dist, normal and point may differ by more (measured: up to 6e-3 m, 0.39,
 * 1e-3 m). On MuJoCo's own vertices the results are equal to the bit
 * (test_narrow_phase_on_mujoco_data). */
static void compare_mesh_pair(const char *first_mjcf, const char *first_json, int plane,
                              const char *file, double tol, double pos_tol, double out_rate,
                              double miss_rate) {
  char xml[2048], json[4096], path[512];
  snprintf(path, sizeof path, KR5_MESHES "/%s", file);
  snprintf(xml, sizeof xml,
           "<mujoco><option><flag gravity='disable'/></option>"
           "<asset><mesh name='m' file='%s'/><mesh name='n' file='" KR5_MESHES "/wrist.STL'/>"
           "</asset><worldbody>%s%s%s"
           "<body name='b'><freejoint/><geom name='mesh' type='mesh' mesh='m'/></body>"
           "</worldbody></mujoco>",
           path, plane ? "" : "<body name='a'><freejoint/>", first_mjcf, plane ? "" : "</body>");
  mjModel *mm = load_mujoco(xml);
  mjData *md = mj_makeData(mm);
  snprintf(json, sizeof json,
           "{ \"max_contacts\": 10, \"bodies\": [ %s"
           " { \"name\": \"b\", \"parent\": \"world\", \"joint\": { \"name\": \"jb\", \"type\": \"free\" },"
           "   \"inertial\": { \"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } } ],"
           " \"geoms\": [ %s, { \"name\": \"mesh\", \"body\": \"b\", \"type\": \"mesh\", \"file\": \"%s\" } ] }",
           plane ? "" : "{ \"name\": \"a\", \"parent\": \"world\", \"joint\": { \"name\": \"ja\","
                        " \"type\": \"free\" }, \"inertial\": { \"mass\": 1, \"inertia\": "
                        "[0.01, 0.01, 0.01, 0, 0, 0] } },",
           first_json, path);
  sim_model *m = ts_model(json);
  sim_data *d = sim_data_new(m);
  const int meshgeom = m->ngeom - 1;
  if (miss_rate < 0) { /* MuJoCo's spacing radius for the plane contacts (see the caller) */
    m->geoms[meshgeom].hull_rbound = mm->geom_rbound[mm->ngeom - 1];
    miss_rate = 0;
  }
  uint64_t s = 0x853c49e6748fea9bull + strlen(first_json);
  int ncon = 0, nmiss = 0, poses = 400, nout = 0;
  double e[3] = {0, 0, 0}, eout[3] = {0, 0, 0};
  for (int k = 0; k < poses; k++) {
    for (int body = 0; body < mm->nbody - 1; body++) {
      double q[4] = {ts_uniform(&s, -1, 1), ts_uniform(&s, -1, 1), ts_uniform(&s, -1, 1), ts_uniform(&s, -1, 1)};
      const double nq = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      for (int i = 0; i < 3; i++) {
        md->qpos[7 * body + i] = ts_uniform(&s, -0.06, 0.06);
      }
      for (int i = 0; i < 4; i++) {
        md->qpos[7 * body + 3 + i] = q[i] / nq;
      }
    }
    double ek[3];
    compare_scene(ek, mm, md, m, d, miss_rate > 0, &ncon, &nmiss);
    const int out = ek[0] > tol || ek[1] > tol || ek[2] > pos_tol;
    nout += out;
    for (int i = 0; i < 3; i++) {
      (out ? eout : e)[i] = fmax((out ? eout : e)[i], ek[i]);
    }
  }
  print_message("%s / %s: %d contacts in %d poses (%d with another count); differences from "
                "MuJoCo%s: dist %.2g, normal %.2g, pos %.2g; %d poses beyond (%.0g, %.0g, %.0g): "
                "up to %.2g, %.2g, %.2g\n",
                plane ? "plane" : first_json, file, ncon, poses, nmiss,
                miss_rate > 0 ? " (first contacts)" : "", e[0], e[1], e[2], nout, tol, tol,
                pos_tol, eout[0], eout[1], eout[2]);
  assert_true(ncon > 100);
  assert_true(nout <= out_rate * poses);
  assert_true(nmiss <= miss_rate * poses);
  ts_sim_free(m, d);
  ts_mj_free(mm, md);
}

static void test_contacts_against_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  TS_REQUIRE_FILE("dart-doc", KR5_MESHES "/wrist.STL");
  const double q[4] = {0.98, 0.1, -0.15, 0.05};
  const double nq = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  char plane_json[256];
  snprintf(plane_json, sizeof plane_json,
           "{ \"name\": \"plane\", \"body\": \"world\", \"type\": \"plane\", \"pos\": "
           "[0.01, -0.02, 0.005], \"quat\": [%.17g, %.17g, %.17g, %.17g] }",
           q[0] / nq, q[1] / nq, q[2] / nq, q[3] / nq);
  /* plane: MuJoCo spaces the extra contacts by 0.3·rbound, its rbound the norm of the mesh's
   * half-extents along its principal axes; ours is the hull's radius about the centre. With
   * its rbound put in, every count and contact agrees; with ours, a few counts differ (the
   * first contact, the deepest, always agrees) */
  const char *plane_mjcf = "<geom name='plane' type='plane' size='0 0 1' pos='0.01 -0.02 0.005' "
                           "quat='0.98 0.1 -0.15 0.05'/>";
  compare_mesh_pair(plane_mjcf, plane_json, 1, "wrist.STL", 1e-8, 1e-8, 0, -1);
  compare_mesh_pair(plane_mjcf, plane_json, 1, "wrist.STL", 1e-8, 1e-8, 0, 0.05);
  /* round shapes and a box against either mesh, and a mesh against a mesh: the same tolerances */
  static const char *const shapes[][3] = {
      {"<geom type='sphere' size='0.04'/>",
       "{ \"name\": \"g\", \"body\": \"a\", \"type\": \"sphere\", \"size\": [0.04] }", "wrist.STL"},
      {"<geom type='capsule' size='0.02 0.05'/>",
       "{ \"name\": \"g\", \"body\": \"a\", \"type\": \"capsule\", \"size\": [0.02, 0.05] }",
       "wrist.STL"},
      {"<geom type='cylinder' size='0.03 0.04'/>",
       "{ \"name\": \"g\", \"body\": \"a\", \"type\": \"cylinder\", \"size\": [0.03, 0.04] }",
       "elbow.STL"},
      {"<geom type='box' size='0.03 0.02 0.04'/>",
       "{ \"name\": \"g\", \"body\": \"a\", \"type\": \"box\", \"size\": [0.03, 0.02, 0.04] }",
       "wrist.STL"},
      {"<geom type='mesh' mesh='n'/>",
       "{ \"name\": \"g\", \"body\": \"a\", \"type\": \"mesh\", \"file\": \"" KR5_MESHES
       "/wrist.STL\" }",
       "elbow.STL"},
  };
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    compare_mesh_pair(shapes[k][0], shapes[k][1], 0, shapes[k][2], 1e-6, 1e-6, 0.15, 0.0);
  }
}

#endif

#if ACHILLES_HAVE_MUJOCO
TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_cube_hull, test_fine_hull, test_damaged_files,
        test_fuzzed_files, test_mesh_cube_as_box, test_mesh_geom_errors, test_hulls_against_mujoco,
        test_narrow_phase_on_mujoco_data, test_contacts_against_mujoco)
#else
TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_cube_hull, test_fine_hull, test_damaged_files,
        test_fuzzed_files, test_mesh_cube_as_box, test_mesh_geom_errors, ts_mujoco_missing)
#endif

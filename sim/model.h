/* sim/model.h: the immutable description of a robot (a kinematic tree of rigid bodies).
 *
 * A model is built once by the loader and never changes while data made from it is stepped,
 * except for `opt` (timestep, integrator, the solver's settings) and a geom's `condim`, which a
 * caller may change between steps.
 * Ownership: sim_model_load_*() allocates, sim_model_free() releases.
 *
 * Conventions (used everywhere in sim/):
 *  - Body 0 is the world. Every other body has one joint (fixed included) or several (a list of
 *    hinges and slides, or of one ball and slides; at most six dofs), all placed at the body frame origin, and a parent with a smaller index (the loader
 *    sorts bodies topologically). A body's joints and dofs are consecutive (joint, jntnum,
 *    dofadr, dofnum); its joints act in order, each in the frame the previous ones left.
 *  - A body's placement (pos, quat) is its frame relative to its parent's frame at q = 0.
 *  - Hinge: the body frame rotates by q about `axis` (a unit vector in the body frame), right-handed.
 *    Slide: the body frame translates by q along `axis`. Fixed: no degree of freedom.
 *    Ball: the body frame rotates by the unit quaternion q (4 coordinates, [w x y z]); its three
 *    velocities are the angular velocity in the body frame (MuJoCo's convention).
 *    Free (a child of the world only, alone on its body): qpos = [x y z, w qx qy qz], the body's
 *    position and orientation in the world (the placement only gives qpos0); qvel = [linear
 *    velocity of the body origin in world axes, angular velocity in body axes] (as MuJoCo).
 *    Quaternions in qpos are normalized where they are used (kinematics) and after each
 *    position update (integrators); a zero quaternion reads as the identity.
 *  - Quaternions are [w, x, y, z]. Units are SI: m, kg, s, rad, N, N·m.
 */
#ifndef ACHILLES_SIM_MODEL_H
#define ACHILLES_SIM_MODEL_H

#include <stddef.h>

/* Joint types. Ball and free joints have nq != nv: qposadr and dofadr address positions and
 * velocities separately. */
typedef enum sim_joint_type {
  SIM_JOINT_FIXED = 0,
  SIM_JOINT_HINGE = 1,
  SIM_JOINT_SLIDE = 2,
  SIM_JOINT_BALL = 3, /* nq 4 (unit quaternion), nv 3 (angular velocity, body axes) */
  SIM_JOINT_FREE = 4, /* nq 7 (position, unit quaternion), nv 6 (linear world, angular body) */
} sim_joint_type;

#define SIM_BODY_DOF_MAX 6 /* most dofs on one body */

typedef enum sim_integrator {
  SIM_INTEGRATOR_EULER = 0,    /* semi-implicit Euler, joint damping implicit (as MuJoCo) */
  SIM_INTEGRATOR_VERLET = 1,   /* velocity Verlet */
  SIM_INTEGRATOR_MIDPOINT = 2, /* implicit midpoint, fixed-point iterations */
  SIM_INTEGRATOR_RK4 = 3,      /* classic fourth-order Runge-Kutta */
} sim_integrator;

#define SIM_NAME_MAX 64

/* What one robot file may describe (docs/robot-format.md, "Limits"), whatever its format: at
 * most this many bodies besides the world, and a tree whose load-time constants (each dof's
 * solve along its path to the root, sim/inverse_weights.c) cost at most SIM_TREE_WORK_MAX: the
 * sum over dofs of the number of dofs from it to the root, squared. A chain of about 1 060 dofs,
 * or 10 000 bodies 200 dofs deep, reaches it; wide trees never do. */
#define SIM_BODIES_MAX 10000
#define SIM_TREE_WORK_MAX 4e8

/* The constraint solver (solver.c): both minimize the same cost, MuJoCo's primal problem. */
typedef enum sim_solver_type {
  SIM_SOLVER_CG = 0,     /* conjugate gradient preconditioned by M (MuJoCo's mjSOL_CG) */
  SIM_SOLVER_NEWTON = 1, /* Newton steps on the Hessian M + JᵀDJ (MuJoCo's mjSOL_NEWTON) */
} sim_solver_type;

/* The friction cone of contacts with friction (condim 3). */
typedef enum sim_cone {
  SIM_CONE_PYRAMIDAL = 0, /* four rows per contact, the edges n ± μ·t (MuJoCo's default) */
  SIM_CONE_ELLIPTIC = 1,  /* three rows per contact, |tangent force| <= μ·normal force */
} sim_cone;

typedef struct sim_option {
  double timestep;         /* s, > 0 */
  double gravity[3];       /* m/s², world frame */
  sim_integrator integrator;
  int midpoint_iterations; /* fixed-point iterations of the implicit midpoint rule, >= 1 */
  int solver_iterations;   /* constraint solver iterations per evaluation, >= 1 */
  double solver_tolerance; /* early exit when the scaled improvement or gradient falls below
                              it (MuJoCo's opt.tolerance); 0: always run every iteration */
  sim_solver_type solver;  /* CG or Newton */
  sim_cone cone;           /* pyramidal or elliptic */
  double impratio;         /* friction rows' impedance over the normal row's (MuJoCo's
                              opt.impratio, > 0, 1 by default): R_friction = R_normal/impratio */
  int disable;             /* SIM_DISABLE_* bits, 0 in every loaded model: only the muscles'
                              length-range simulation at load (sim/muscle_range.c) sets them */
  double viscosity;        /* the medium's viscosity, Pa·s (MuJoCo's opt.viscosity; 0: none):
                              each body drags as a sphere of its inertia box's mean size
                              (sim/fluid.c) */
  double wind[3];          /* the medium's velocity, world, m/s (with viscosity) */
} sim_option;

#define SIM_DISABLE_PASSIVE 1   /* no springs, dampers (Euler's implicit damping stays, as in
                                   MuJoCo) or applied body forces in qfrc_passive */
#define SIM_DISABLE_ACTUATION 2 /* qfrc_actuator 0 (lengths still computed) */

/* MuJoCo's soft-constraint parameters (sim/constraint.c):
 * solref = [timeconst, dampratio] (both > 0) or [-stiffness, -damping] (both <= 0, direct);
 * solimp = [dmin, dmax, width, midpoint, power]. Defaults are MuJoCo's. */
#define SIM_NREF 2
#define SIM_NIMP 5

typedef struct sim_body {
  char name[SIM_NAME_MAX];
  int parent;            /* index of the parent body; -1 for the world */
  double pos[3];         /* placement in the parent frame at q = 0, m */
  double quat[4];        /* placement orientation, unit quaternion [w x y z] */
  double mass;           /* kg */
  double fluid_diam;     /* derived (sim/fluid.c): the mean side of its equivalent inertia box, m */
  double com[3];         /* centre of mass in the body frame, m */
  double inertia[9];     /* rotational inertia about the COM in body axes, kg·m², row-major */
  int joint;             /* first of its joints in model.joints; -1 for the world */
  int jntnum;            /* its joints (1 for a fixed or single joint) */
  int dofadr;            /* first of its dofs, -1 when it has none */
  int dofnum;            /* its dofs: 0 (welded) to SIM_BODY_DOF_MAX */
  int multi_dof;         /* a ball, a free joint or several joints: the n-dof branches of the
                          * dynamics; 0 (one hinge or slide, or welded): the 1-dof paths */
  int described;         /* index in the description's "bodies" array (-1 for the world): the
                          * loader orders parents first, tools that promise file order use this */
  /* derived by the loader */
  double mat[9];         /* rotation matrix of quat, row-major */
  int identity_quat;     /* quat is [1 0 0 0]: kinematics skips a rotation */
  int diagonal_inertia;  /* inertia has no products: kinematics rotates it more cheaply */
  int last_child;        /* its child of the highest index, -1 for a leaf: the first the ABA's
                          * backward pass reaches, which starts the articulated inertia from
                          * cinert (no per-call copy) */
  double invweight0[2];  /* mean translational and rotational diagonal of J·M⁻¹·Jᵀ at the COM,
                            q = 0 (sim_constraint_setconst; scales contact regularisation) */
  int weld;              /* the nearest body, itself included, that moves relative to its parent
                            (a fixed joint welds a body to its parent; the world's is 0):
                            MuJoCo's weldid, which the contact filter compares */
} sim_body;

typedef struct sim_joint {
  char name[SIM_NAME_MAX];
  sim_joint_type type;
  int body;              /* the body this joint moves */
  int qposadr;           /* first position coordinate in data.qpos, -1 for fixed */
  int dofadr;            /* first velocity coordinate in data.qvel, -1 for fixed */
  double axis[3];        /* unit vector in the body frame */
  double pos[3];         /* anchor in the body frame (a hinge of a several-joint body; else 0) */
  double damping;        /* N·m·s/rad or N·s/m */
  double armature;       /* rotor inertia reflected to the joint, kg·m² or kg */
  double stiffness;      /* N·m/rad or N/m */
  double springref;      /* spring rest position, rad or m */
  int limited;           /* 1: range is enforced as two one-sided soft constraints */
  double range[2];       /* rad or m (may be given without `limited`: stored only) */
  double solref_limit[SIM_NREF];    /* soft-constraint reference of the limits */
  double solimp_limit[SIM_NIMP];    /* impedance of the limits */
  double frictionloss;              /* Coulomb (dry) friction, N·m or N; 0: none */
  double solref_friction[SIM_NREF]; /* soft-constraint reference of the friction */
  double solimp_friction[SIM_NIMP]; /* impedance of the friction */
  /* derived by the loader (sim_constraint_setconst) */
  double invweight0;     /* (M⁻¹)ₖₖ of the joint's dof at q = 0: scales the regularisation */
} sim_joint;

typedef struct sim_site {
  char name[SIM_NAME_MAX];
  int body;
  double pos[3];         /* point of interest in the body frame, m */
} sim_site;

/* Collision geometry (sim/collision.c): shapes on bodies that touch through contacts. */
typedef enum sim_geom_type {
  SIM_GEOM_PLANE = 0,   /* the z = 0 plane of its frame, infinite; world body only */
  SIM_GEOM_SPHERE = 1,  /* size[0] = radius */
  SIM_GEOM_CAPSULE = 2, /* size[0] = radius, size[1] = half-length along its z axis */
  SIM_GEOM_BOX = 3,     /* size[0..2] = half-extents */
  SIM_GEOM_CYLINDER = 4, /* size[0] = radius, size[1] = half-length along its z axis */
  SIM_GEOM_MESH = 5,    /* the convex hull of a mesh file's vertices (model.hull_vert) */
} sim_geom_type;

/* Most hull vertices a mesh geom may keep (the loader refuses more): a bound on memory; the
 * support search climbs the hull graph, so its cost grows slowly with the count. CAD exports
 * of hobby arms reach several thousand (the SO-101's largest link: 4 880). */
#define SIM_HULL_VERT_MAX 65536

typedef struct sim_geom {
  char name[SIM_NAME_MAX];
  sim_geom_type type;
  int body;
  double pos[3];            /* in the body frame, m */
  double quat[4];           /* in the body frame */
  double mat[9];            /* derived: rotation of quat */
  double size[3];
  double friction[3];       /* sliding, torsional, rolling (only sliding is used) */
  int condim;               /* contact dimensionality: 1 (frictionless) or 3 (sliding friction);
                               a pair takes the larger of its two geoms' */
  int priority;             /* a pair takes condim, friction, solref and solimp from the geom of
                               higher priority (MuJoCo's); equal: as above. Default 0 */
  double solref[SIM_NREF];  /* contact soft-constraint reference */
  double solimp[SIM_NIMP];  /* contact impedance */
  double margin;            /* contacts are made within this distance, m (a pair: the larger) */
  double gap;               /* ... but those farther than margin − gap make no rows (they are in
                               the gap: MuJoCo's exclude 1; adhesion counts them) */
  int contype;              /* contact groups (MuJoCo's bitmasks): two geoms may touch when */
  int conaffinity;          /* (contype₁ & conaffinity₂) | (contype₂ & conaffinity₁) != 0 */
  /* derived by the loader */
  double rbound;            /* radius about pos of the sphere that holds the shape (broad phase;
                               a box's half-diagonal, a mesh's farthest hull vertex) */
  /* mesh only (derived by the loader, else 0): its convex hull, in the geom frame */
  int hull_adr;             /* first vertex in model.hull_vert (3 doubles each) */
  int hull_nvert;           /* hull vertices */
  int graph_adr;            /* its hull graph in model.hull_graph (sim/mesh.h) */
  double center[3];         /* a point inside the hull (its centroid): MPR's interior point */
  double hull_rbound;       /* the hull's radius about center (plane contacts' spacing) */
} sim_geom;

/* Actuators turn a command (data.ctrl) into a generalized force on one joint (sim/actuator.c).
 * The command's meaning depends on the type; see docs/robot-format.md. */
typedef enum sim_actuator_type {
  SIM_ACT_MOTOR = 0,          /* ctrl: torque before the gear, N·m (or force, N); force = gear·ctrl */
  SIM_ACT_DC_MOTOR = 1,       /* ctrl: duty cycle in [-1, 1] or voltage, V (see dc_input_voltage) */
  SIM_ACT_POSITION_SERVO = 2, /* ctrl: target position, rad or m */
  SIM_ACT_VELOCITY_SERVO = 3, /* ctrl: target velocity, rad/s or m/s */
  SIM_ACT_SMART_SERVO = 4,    /* ctrl: joint torque, N·m, from a smart servo's own firmware and
                                 motor model (hil/servo); its "servo" block is read there */
  SIM_ACT_MUSCLE = 5,         /* ctrl: neural excitation in [0, 1]; act: activation; force
                                 along its tendon (or joint) from MuJoCo 2.2.2's muscle model
                                 (sim/muscle.c) */
} sim_actuator_type;

/* MuJoCo 2.2.2's muscle parameters (its mju_muscleGain / mju_muscleBias / mju_muscleDynamics):
 * lengths are normalized so that `range` maps onto the actuator's lengthrange. */
typedef struct sim_muscle {
  double range[2];       /* operating length range, in optimal lengths (0.75, 1.05) */
  double force;          /* peak active force, N; < 0: scale / acc0 */
  double scale;          /* force = scale / acc0 when force < 0 (200) */
  double lmin, lmax;     /* lengths (in optimal lengths) where the active force vanishes (0.5, 1.6) */
  double vmax;           /* shortening speed, optimal lengths per s, at which force is 0 (1.5) */
  double fpmax;          /* passive force halfway from 1 to lmax, doubled, in units of the
                            peak force (1.3; 1.5·fpmax at lmax) */
  double fvmax;          /* active force when lengthening fast, in units of the peak (1.2) */
  double timeconst[2];   /* activation and deactivation time constants, s (0.01, 0.04) */
} sim_muscle;

typedef struct sim_actuator {
  char name[SIM_NAME_MAX];
  sim_actuator_type type;
  int joint;               /* driven joint (has one degree of freedom); -1 on a tendon */
  int qposadr;             /* its position coordinate (-1 on a tendon) */
  int dof;                 /* its velocity coordinate (-1 on a tendon) */
  int tendon;              /* the tendon it pulls (force along it, moment ten_J), or -1 */
  int actadr;              /* index of its internal state in data.act (DC motor current), or -1 */
  double gear;             /* motor: force = gear·ctrl; DC motor: gear ratio (motor turns per joint turn) */
  double ctrlrange[2];     /* commands are clamped to this range */
  /* DC motor */
  int dc_input_voltage;    /* 0: ctrl is a duty cycle in [-1, 1]; 1: ctrl is a voltage, V */
  double supply_voltage;   /* V */
  double resistance;       /* winding resistance, Ω */
  double inductance;       /* winding inductance, H (0: current follows voltage instantly) */
  double kt;               /* torque constant, N·m/A */
  double ke;               /* back-EMF constant, V·s/rad */
  double efficiency;       /* gearbox efficiency, (0, 1] */
  double current_limit;    /* driver current limit, A */
  /* servos */
  double kp;               /* position gain, N·m/rad */
  double kd;               /* damping gain of the position servo, N·m·s/rad */
  double kv;               /* velocity gain, N·m·s/rad */
  double force_limit;      /* output limit of a motor, servo or DC motor at the joint, N·m or N (0: none) */
  /* muscle */
  sim_muscle muscle;
  double lengthrange[2];   /* the actuator lengths `muscle.range` maps onto, m (or rad): given,
                              or found at load as MuJoCo's compiler does (sim/muscle_range.c) */
  double acc0;             /* derived: |M⁻¹·moment| at qpos0 (MuJoCo's actuator_acc0) */
  /* slider-crank transmission (sim/actuator_crank.c, MuJoCo's mjTRN_SLIDERCRANK): with
   * crank_site >= 0 the actuator drives no joint (joint, qposadr, dof are −1) but the length
   * from slider_site along the slider to where the rod from crank_site meets it */
  int crank_site;          /* the crank pin's site, or −1 for an actuator on a joint */
  int slider_site;         /* the slider's site */
  double slider_axis[3];   /* the slider's direction, unit, in slider_site's body frame */
  double crank_length;     /* the connecting rod's length, m (> 0) */
  /* adhesion (sim/actuator_crank.c, MuJoCo's <adhesion>, mjTRN_BODY): with adhesion_body >= 0
   * a motor pulls the body onto what it touches, along minus the mean of its contacts' normal
   * Jacobians (joint, qposadr, dof are −1) */
  int adhesion_body;       /* the body, or −1 */
} sim_actuator;

/* Tendons (sim/tendon.c): a length L(q) with its Jacobian (moment) J = ∂L/∂q.
 *  - fixed: L = Σ coef·q_joint over hinge and slide joints (MuJoCo's <fixed>);
 *  - spatial: the path through sites, wrapping around spheres and cylinders between two sites,
 *    divided by the divisor of the last pulley (MuJoCo's <spatial>).
 * A tendon may have a spring-damper (sim_passive), length limits and Coulomb friction (rows of
 * the constraint stage), and actuators that pull along it. */
typedef enum sim_wrap_type {
  SIM_WRAP_JOINT = 0,    /* fixed tendon term: id joint, prm coef */
  SIM_WRAP_SITE = 1,     /* id site */
  SIM_WRAP_SPHERE = 2,   /* id geom (a sphere), sidesite the site choosing the side, or -1 */
  SIM_WRAP_CYLINDER = 3, /* id geom (a cylinder), sidesite likewise */
  SIM_WRAP_PULLEY = 4,   /* prm divisor of the branches that follow */
} sim_wrap_type;

typedef struct sim_wrap {
  sim_wrap_type type;
  int id;                /* joint, site or geom; -1 for a pulley */
  int sidesite;          /* wrapping geoms: the side site, -1 for none */
  double prm;            /* joint coefficient or pulley divisor */
} sim_wrap;

typedef struct sim_tendon {
  char name[SIM_NAME_MAX];
  int spatial;           /* 0: fixed (joint terms), 1: spatial (a path) */
  int wrapadr, wrapnum;  /* its path or terms in model.wraps */
  double stiffness;      /* N/m (or N·m/rad for a fixed tendon's units) */
  double springlength;   /* the spring's rest length; given < 0: its length at the joints'
                            springref (MuJoCo's qpos_spring), set by the loader */
  double damping;        /* N·s/m */
  int limited;           /* 1: range is enforced as one-sided soft constraints */
  double range[2];       /* m */
  double margin;         /* a limit row exists while the distance to it is below this, m */
  double solref_limit[SIM_NREF];
  double solimp_limit[SIM_NIMP];
  double frictionloss;   /* Coulomb friction along the tendon, N; 0: none */
  double solref_friction[SIM_NREF];
  double solimp_friction[SIM_NIMP];
  /* derived by the loader (sim__tendon_setconst) */
  double length0;        /* length at qpos0 */
  double invweight0;     /* J·M⁻¹·Jᵀ at qpos0: scales the rows' regularisation */
} sim_tendon;

/* Equality constraints (sim/constraint_equality.c): MuJoCo's <equality> connect, weld and joint,
 * soft rows that are always active (no sign, no friction) while `active` is set. */
typedef enum sim_equality_type {
  SIM_EQ_CONNECT = 0, /* a point of body1 held on a point of body2: 3 rows */
  SIM_EQ_WELD = 1,    /* body1 held at a relative pose to body2: 6 rows */
  SIM_EQ_JOINT = 2,   /* q1 − q1₀ = p(q2 − q2₀), a quartic p (joint2 absent: q1 = q1₀ + c₀): 1 row */
  SIM_EQ_TENDON = 3,  /* the same on two tendons' lengths L − L₀ (L₀: length0): 1 row */
} sim_equality_type;

#define SIM_EQ_NDATA 11 /* MuJoCo's mjNEQDATA (2.2.2) */

typedef struct sim_equality {
  char name[SIM_NAME_MAX]; /* may be empty */
  sim_equality_type type;
  int obj1, obj2;          /* connect, weld: bodies (obj2 0: the world); joint: joints (obj2 −1:
                              none), each a hinge or a slide; tendon: tendons (obj2 −1: none) */
  int active;              /* 0: no rows (a caller may change it between steps, as MuJoCo's
                              eq_active) */
  double solref[SIM_NREF]; /* soft-constraint reference and impedance of its rows */
  double solimp[SIM_NIMP];
  /* MuJoCo's eq_data layout, completed by the loader at MuJoCo's qpos0 (hinges and slides 0):
   *  connect: [0..2] anchor in body1's frame, [3..5] the same point in body2's frame;
   *  weld: [0..2] anchor in body2's frame, [3..5] the same point in body1's frame, [6..9] the
   *        orientation of body2 relative to body1 that is held, [10] torquescale;
   *  joint, tendon: [0..4] polycoef c₀..c₄. */
  double data[SIM_EQ_NDATA];
} sim_equality;

typedef struct sim_model {
  char name[SIM_NAME_MAX];
  int nbody;             /* bodies including the world (body 0) */
  int njnt;              /* joints, at least one per non-world body (fixed ones included) */
  int nq;                /* position coordinates */
  int nv;                /* velocity coordinates (degrees of freedom) */
  int nsite;
  int nu;                /* actuators (commands in data.ctrl) */
  int ngeom;             /* collision shapes */
  int max_contacts;      /* contacts kept per evaluation (more are dropped) */
  int na;                /* actuator state variables (data.act) */
  int ntrn;              /* actuators on a slider-crank or adhesive (data.trn_moment is kept for
                            them) */
  int ntendon;           /* tendons */
  int nwrap;             /* their path elements and joint terms */
  sim_body *bodies;      /* [nbody] */
  sim_joint *joints;     /* [njnt] */
  sim_site *sites;       /* [nsite] */
  sim_actuator *actuators; /* [nu] */
  sim_geom *geoms;       /* [ngeom] */
  sim_tendon *tendons;   /* [ntendon] */
  sim_wrap *wraps;       /* [nwrap] */
  int nhull_vert;        /* mesh hull vertices, all mesh geoms */
  double *hull_vert;     /* [3·nhull_vert] in each geom's frame, scale applied */
  int nhull_graph;
  int *hull_graph;       /* [nhull_graph] each hull's vertex neighbours (sim/mesh.h) */
  int nexclude;          /* body pairs whose geoms never touch (MuJoCo's <exclude>) */
  int *exclude;          /* [2·nexclude] body indices, the smaller first, sorted */
  int neq;               /* equality constraints */
  sim_equality *equalities; /* [neq] */
  int *dof_joint;        /* [nv] joint of each degree of freedom */
  int *dof_body;         /* [nv] body of each degree of freedom */
  double *qpos0;         /* [nq] initial positions from the description */
  struct sim_name_index *names; /* [2]: bodies and joints by name, made by the loader, so that
                                   the lookups below take constant time (NULL: they search) */
  /* derived by the loader (sim_constraint_setconst) */
  int *dof_parent;       /* [nv] dof of the nearest moving ancestor, -1 at a root: the
                            sparsity of M along the tree */
  int nefc_max;          /* most constraint rows one evaluation can produce */
  double meaninertia;    /* mean diagonal of M at q = 0: scales the solver's tolerance */
  sim_option opt;
} sim_model;

/* Loads a robot description from a JSON file. On failure returns NULL and writes a message
 * naming the file, the JSON path (or line and column) and what was expected into err. */
sim_model *sim_model_load_file(const char *path, char *err, size_t err_sz);

/* Same, from a JSON text held in memory; `source` names it in error messages. */
sim_model *sim_model_load_string(const char *json, const char *source, char *err, size_t err_sz);

/* Releases a model; accepts NULL. */
void sim_model_free(sim_model *m);

/* Index lookups by name; -1 when absent. Bodies and joints through the loader's name index (a
 * caller that renames them by hand frees m->names and sets it NULL). */
int sim_model_body(const sim_model *m, const char *name);
int sim_model_joint(const sim_model *m, const char *name);
int sim_model_site(const sim_model *m, const char *name);
int sim_model_actuator(const sim_model *m, const char *name);
int sim_model_tendon(const sim_model *m, const char *name);
int sim_model_geom(const sim_model *m, const char *name);

/* Model constants of the constraint stage (constraint.c): each body's weld, dof_parent, each
 * joint's invweight0 and meaninertia (M at q = 0, as MuJoCo computes them at its qpos0), and
 * nefc_max. Called by the loader; a caller that builds or edits a model by hand calls it
 * again. Returns 0, or -1 when out of memory. */
int sim_constraint_setconst(sim_model *m);

/* Number of position / velocity coordinates of a joint type. */
int sim_joint_nq(sim_joint_type type);
int sim_joint_nv(sim_joint_type type);

const char *sim_integrator_name(sim_integrator integrator);
/* Parses "euler", "verlet", "midpoint" or "rk4"; returns -1 for anything else. */
int sim_integrator_parse(const char *name);

/* "cg" and "newton"; "pyramidal" and "elliptic". The parsers return -1 for anything else. */
const char *sim_solver_name(sim_solver_type solver);
int sim_solver_parse(const char *name);
const char *sim_cone_name(sim_cone cone);
int sim_cone_parse(const char *name);

#endif

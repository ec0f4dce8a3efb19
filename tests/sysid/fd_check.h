/* tests/sysid/fd_check.h: a problem's Jacobian (sysid_residual's, from the sensitivities)
 * against central differences of sysid_residual itself, at the problem's start.
 *
 * Returns the worst column's max|J − FD| / max|FD| and prints it with the column's name. */
#ifndef ACHILLES_TESTS_SYSID_FD_CHECK_H
#define ACHILLES_TESTS_SYSID_FD_CHECK_H

#include "sysid/sysid.h"

double fd_jacobian_error(sysid_problem *p, const char *what);

#endif

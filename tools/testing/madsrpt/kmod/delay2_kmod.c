// SPDX-License-Identifier: GPL-2.0
/*
 * delay2_kmod - a second copy of delay_kmod, for a test that holds two
 * functions at once (a module is loaded once per name).
 */
#include "delay_kmod.c"

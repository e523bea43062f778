# SPDX-License-Identifier: GPL-2.0
#
# Front end of the ib-mad-srpt tree.  `make help` lists the targets; the
# scripts behind them live in tools/testing/madsrpt/.

H := tools/testing/madsrpt
T ?=

.PHONY: help deps deb build build-upstream build-debug check check-upstream check-compare check-debug soak fabric-scale bench lint compat compat-distro vm demo patches install-tree

help:
	@echo "make demo             an SRP target from zero, shown end to end"
	@echo "make check [T=test]   build, then run the KUnit suites and VM tests"
	@echo "make check-upstream   the same tests against pristine 6.12, then ours beside it"
	@echo "make check-compare    the table of the last ours and upstream runs, point by point"
	@echo "make check-debug      the same tests on our tree built with KASAN, UBSAN, kmemleak..."
	@echo "make soak             the long forms: fuzzer, rogue initiator, lifecycle cycles, fabric scale"
	@echo "make fabric-scale     fat trees of 64, 256 and 1,024 HCAs on ibdevsim, swept by opensm"
	@echo "make bench [F=fig]    ours and pristine 6.12 side by side: a table, CSV, plots"
	@echo "make lint             checkpatch --strict, sparse, W=1, kernel-doc"
	@echo "make compat           build every in-tree MAD API user against us, then compat-distro"
	@echo "make compat-distro    ib_core, ib_srpt, ibdevsim with the distribution's config and headers"
	@echo "make vm               a shell in a VM with our modules"
	@echo "make build            build our kernel into build/ours"
	@echo "make build-upstream   build pristine 6.12 into build/upstream"
	@echo "make build-debug      build our tree with the detectors into build/debug"
	@echo "make deb              the DKMS package for the distribution's kernel"
	@echo "make patches          the tree as a git format-patch series in patches/"
	@echo "make install-tree KSRC=/path/to/linux-6.12   copy the tree and glue into KSRC"
	@echo "make deps             install the Debian packages we need"

deps:
	$(H)/host/deps.sh

build:
	$(H)/host/build.sh ours

build-upstream:
	$(H)/host/build.sh upstream

build-debug:
	$(H)/host/build.sh debug

demo:
	$(H)/host/demo.sh

check:
	$(H)/host/check.sh $(T)

check-upstream:
	MS_KERNEL=upstream $(H)/host/check.sh $(T)

check-compare:
	$(H)/host/compare.sh $(T)

check-debug:
	MS_KERNEL=debug $(H)/host/check.sh $(T)

# The tests with a long form (MS_SOAK=1): 100,000+ fuzzed MADs, the rogue
# SRP initiator at length and 50 cycles of each lifecycle step, 200,000
# raw packets fuzzed onto a remote cable; and the fabric-scale run.
SOAK_TESTS := mad-fuzz srpt-rogue srpt-lifecycle ibsim-scale ibsim-cable

soak:
	MS_SOAK=1 $(H)/host/check.sh $(if $(T),$(T),$(SOAK_TESTS))

# Fat trees of 64, 256 and 1,024 HCAs on ibdevsim; a
# "# long:" test, not part of make check.
fabric-scale:
	$(H)/host/check.sh ibsim-scale

# Figures, not a test: each in its own VM boot, the two kernels alternating.
F ?=

bench:
	$(H)/host/bench.sh $(F)

lint:
	$(H)/lint/lint.sh

# Both builds run, and either failing fails make compat.
compat:
	@rc=0; $(H)/host/compat.sh || rc=1; $(H)/host/compat-distro.sh || rc=1; exit $$rc

compat-distro:
	$(H)/host/compat-distro.sh

vm: build
	$(H)/host/vm.sh -i

deb:
	$(H)/host/deps.sh
	$(H)/host/deb.sh build

patches:
	$(H)/host/patches.sh

install-tree:
	$(H)/host/install-tree.sh $(KSRC)

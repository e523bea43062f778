#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""rst-check.py KSRC FILE... - parse reStructuredText with docutils.

The kernel's Sphinx extension provides the ``kernel-doc`` directive; here a
stand-in runs scripts/kernel-doc -rst from KSRC with the directive's
options and parses what it prints, so a directive that names a missing
file or function, or kernel-doc output that is not valid reStructuredText,
fails the check.  Prints one line per problem; exits non-zero on any.
"""
import subprocess
import sys

import docutils.core
import docutils.utils
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList
from docutils import nodes

KSRC = sys.argv[1]


class KernelDoc(Directive):
    """Expand like Documentation/sphinx/kerneldoc.py does, minus Sphinx."""
    required_arguments = 1
    has_content = False
    option_spec = {
        "doc": directives.unchanged_required,
        "export": directives.unchanged,
        "internal": directives.unchanged,
        "identifiers": directives.unchanged,
        "no-identifiers": directives.unchanged,
        "functions": directives.unchanged,
        "functions-only": directives.unchanged,
    }

    def run(self):
        path = self.arguments[0]
        cmd = [KSRC + "/scripts/kernel-doc", "-rst", "-enable-lineno"]
        opts = self.options
        if "functions" in opts and opts["functions"].strip():
            for f in opts["functions"].split():
                cmd += ["-function", f]
        elif "identifiers" in opts and opts["identifiers"].strip():
            for f in opts["identifiers"].split():
                cmd += ["-function", f]
        elif "doc" in opts:
            cmd += ["-function", opts["doc"]]
        elif "export" in opts:
            cmd += ["-export"]
        elif "internal" in opts:
            cmd += ["-internal"]
        res = subprocess.run(cmd + [KSRC + "/" + path], capture_output=True,
                             text=True)
        errs = [l for l in res.stderr.splitlines()
                if l.strip() and "Sphinx version" not in l]
        if res.returncode or errs or not res.stdout.strip():
            msg = "kernel-doc %s: %s" % (path, "; ".join(errs) or "no output")
            return [self.state.document.reporter.error(msg,
                                                       line=self.lineno)]
        lines = [l for l in res.stdout.splitlines()
                 if not l.startswith(".. LINENO")]
        node = nodes.section()
        self.state.nested_parse(StringList(lines, source=path), 0, node)
        return node.children


directives.register_directive("kernel-doc", KernelDoc)
# Sphinx-only roles and directives the kernel's documents use.
for d in ("c:function", "c:type", "c:struct", "c:macro", "c:enum",
          "c:union", "c:member", "c:var", "toctree", "c:namespace"):
    directives.register_directive(d, type("Nop", (Directive,), {
        "has_content": True, "optional_arguments": 99,
        "final_argument_whitespace": True, "option_spec": None,
        "run": lambda self: []}))

bad = 0
for path in sys.argv[2:]:
    with open(path) as f:
        text = f.read()
    stream = open("/dev/null", "w")
    try:
        doc = docutils.core.publish_doctree(
            text, source_path=path,
            settings_overrides={"report_level": 5, "halt_level": 5,
                                "warning_stream": stream})
    except Exception as e:  # docutils raises on severe errors
        print("%s: %s" % (path, e))
        bad += 1
        continue
    for msg in doc.traverse(nodes.system_message):
        if msg["level"] >= 2 and "Unknown interpreted text role" not in msg.astext():
            print("%s:%s: %s" % (path, msg.get("line", "?"),
                                 msg.astext().splitlines()[0]))
            bad += 1
sys.exit(1 if bad else 0)

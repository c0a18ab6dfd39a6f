# SPDX-License-Identifier: BSD-3-Clause
"""What the Python tools of usertools/ share: loading a sibling tool.

usertools/dtxn-reproduce and usertools/dtxn-crashsweep reuse
dtxn-sweep's and dtxn-plot's functions; those are scripts without a .py
suffix, so a plain import cannot name them.
"""
import importlib.machinery
import importlib.util
import os

TOOLS = os.path.dirname(os.path.abspath(__file__))


def tool(name):
    """Imports usertools/NAME (a script without .py) as a module.

    name: the script's file name, e.g. "dtxn-sweep". Returns the module;
    raises OSError if the file cannot be read and whatever the script
    raises while it is loaded (its main() is not run: each tool guards
    it with __name__ == "__main__").
    """
    path = os.path.join(TOOLS, name)
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod

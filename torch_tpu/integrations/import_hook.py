"""Run a function on a module right after it is first imported, without
importing it ourselves (so that `import torch` stays cheap for programs that
never use the library)."""
import importlib.abc
import importlib.util
import sys


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the real loader of one module."""

    def __init__(self, name, fn):
        self.name, self.fn = name, fn

    def find_spec(self, name, path, target=None):
        if name != self.name:
            return None
        sys.meta_path.remove(self)  # once: the module is imported once
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_call(module):
            exec_module(module)
            self.fn(module)

        spec.loader.exec_module = exec_then_call
        return spec


def after_import(name: str, fn) -> None:
    """fn(module) now if `name` is imported, else right after its import."""
    if name in sys.modules:
        fn(sys.modules[name])
    elif not any(isinstance(f, _AfterImport) and f.name == name for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(name, fn))

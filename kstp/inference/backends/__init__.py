"""Built-in inference backends, one module each; a module registers its backend when imported.

:func:`kstp.inference.backend.get_backend` imports the module of the backend it is asked for
(:data:`kstp.inference.backend.BUILTIN_BACKENDS`).
"""

# A package of its own: `.mixin` is app.mixin, not a module of mooncake.
from .mixin import Mixin
from . import mixin
from mooncake.store import MooncakeDistributedStore


def make():
    return MooncakeDistributedStore()


def tune(store, config):
    # Same names as mooncake's roles, other objects: a torch store and a model config.
    store.set_timeout(30)
    store.mark_untrusted()
    return config.hidden_size * config.num_layers


class Engine(Mixin):
    pass

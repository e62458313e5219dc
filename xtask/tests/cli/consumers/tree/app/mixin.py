class Mixin:
    def set_timeout(self, seconds):
        self.timeout = seconds

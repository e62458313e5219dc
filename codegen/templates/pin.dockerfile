ARG {{ c.base_tag_arg }}={{ c.base_tag }}
FROM {{ c.base_image }}:{{ c.base_tag_var() }}

{{ intro }}
{{ next }}
# {{ c.arg_prefix }}_PIP_INDEX_URL: the package index pip downloads the wheel from (a mirror, say);
# whatever it serves must be one of the wheels whose sha256 api.toml lists.
ARG {{ c.arg_prefix }}_PIP_INDEX_URL=https://pypi.org/simple
# One requirement with every wheel's hash: pip --require-hashes installs only those bytes, a
# wheel (never a source build), without touching the base image's other packages (--no-deps).
RUN set -eu; \
    tmp="$(mktemp -d)"; \
    { printf '%s' "{{ requirement }}"; \
      printf ' --hash=sha256:%s' \
{%- for w in wheels %}
          {{ w.sha256 }} \
{%- endfor %}
          ; \
      echo; } > "$tmp/requirements.txt"; \
    python3 -m pip install --no-cache-dir --disable-pip-version-check --no-deps --only-binary=:all: \
        --require-hashes --index-url "{{ c.var("PIP_INDEX_URL") }}" -r "$tmp/requirements.txt"; \
    rm -rf "$tmp"; \
    installed="$(python3 -c 'import importlib.metadata as m; print(m.version("{{ package }}"))')"; \
    [ "$installed" = "{{ version }}" ] || { echo "{{ c.name }} pin: error: {{ package }} is $installed after installing {{ version }}" >&2; exit 1; }; \
    echo "{{ c.name }} pin: {{ package }} {{ base_version }} -> {{ version }} (the whole wheel: module, native core, master)"
LABEL io.{{ c.name }}.pinned="{{ requirement }}"
{% include "import_check.dockerfile" %}

COPY {{ c.shim_copy_from }} {{ c.var("SHIM_DIR") }}/{{ c.shim_file }}
# Build-time check: import every symbol api.toml lists, the native core and each class's
# methods; then install the shim and run its full check (parameters, defaults, native
# requirements). A miss fails the build and names what is missing.
RUN python3 -c "{{ c.import_check }}" \
    && site="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
    && install -m 0644 "{{ c.var("SHIM_DIR") }}/{{ c.shim_file }}" "$site/{{ c.shim_file }}" \
    && python3 -m {{ c.shim_module }}

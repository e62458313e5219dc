# Build args per variant, from api.toml. VARIANTS below merges them into its build_args.
{{ constant }} = {
{%- for (variant, args) in variants %}
    {{ variant }}: {{ args }},
{%- endfor %}
}

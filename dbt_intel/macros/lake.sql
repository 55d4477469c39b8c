{#-
  Reading the catlas lake: Parquet files Hive-partitioned as <table>/date=YYYY-MM-DD/hour=HH/.

  Nothing here touches the lake while dbt parses; paths are resolved when a model runs, so
  CATLAS_LAKE_URL can change between `dbt parse` and `dbt build`.
-#}

{% macro lake_root() -%}
  {#- The lake URL: --vars lake_url, else CATLAS_LAKE_URL, else the local default. -#}
  {%- set url = var('lake_url', none) or env_var('CATLAS_LAKE_URL', '.catlas/lake') -%}
  {%- set url = url | trim -%}
  {%- if url.startswith('file://') -%}
    {%- set url = url[7:] -%}
  {%- endif -%}
  {{- return(url.rstrip('/') or '/') -}}
{%- endmacro %}


{% macro lake_glob(name) -%}
  {{- return(lake_root() ~ '/' ~ name ~ '/*/*/*.parquet') -}}
{%- endmacro %}


{% macro lake_table(name) -%}
  {#-
    A FROM-clause expression reading the visible files of one lake table.

    Compaction and reprocess write a partition's new file beside the files it replaces and
    then list those in the partition's _superseded.json ({"hidden": {file: unix time}});
    hidden files stay on disk for an hour for the readers that listed them. The expression
    reads every Parquet file with its name and drops the rows of the files any state lists,
    so a model counts each row once, as `catlas sql` does. Both globs are expanded when the
    query runs: a view sees later swaps, and read_text() of no state file is no row.

    The source() call only records lineage (the model depends on source lake.<name>); the
    relation it returns is not used. At run time a table with no files yet reads as an empty,
    typed relation built from the source's declared columns, because DuckDB refuses a
    read_parquet glob that matches nothing. A view built that way stays empty until the
    next `dbt run`/`dbt build`; once built over real files, it sees new files at query time.
  -#}
  {%- do source('lake', name) -%}
  {%- set pattern = lake_glob(name) -%}
  {%- if execute and not lake_has_files(pattern) -%}
    {{- return(lake_empty_table(name, 'lake')) -}}
  {%- endif -%}
  {%- set files = "read_parquet(" ~ lake_quote(pattern) ~ ", hive_partitioning = true, union_by_name = true, filename = true)" -%}
  {{- return(
      "(select * exclude (filename) from " ~ files
      ~ " where filename not in (" ~ lake_hidden_files(name) ~ "))"
  ) -}}
{%- endmacro %}


{% macro lake_hidden_files(name) -%}
  {#- A query of the paths of one table's hidden files, spelled as read_parquet names them. -#}
  {%- set states = lake_quote(lake_root() ~ '/' ~ name ~ '/*/*/_superseded.json') -%}
  {{- return(
      "select parse_dirpath(filename) || '/' || hidden_file from ("
      ~ "select filename, unnest(json_keys(content::json, '$.hidden')) as hidden_file"
      ~ " from read_text(" ~ states ~ "))"
  ) -}}
{%- endmacro %}


{% macro lake_quote(text) -%}
  {{- return("'" ~ text | replace("'", "''") ~ "'") -}}
{%- endmacro %}


{% macro lake_has_files(pattern) -%}
  {%- set result = run_query('select count(*) from glob(' ~ lake_quote(pattern) ~ ')') -%}
  {{- return(result.columns[0].values()[0] > 0) -}}
{%- endmacro %}


{% macro lake_dimension(name) -%}
  {#-
    A FROM-clause expression reading the latest daily snapshot of one dimension
    (<lake>/<name>/date=YYYY-MM-DD/<name>.parquet, rewritten at each compaction of that day).
    Like lake_table(), it records the dependency on source('dims', name) and reads as an
    empty typed relation while the dimension has no file yet.
  -#}
  {%- do source('dims', name) -%}
  {%- set pattern = lake_root() ~ '/' ~ name ~ '/*/*.parquet' -%}
  {%- if execute and not lake_has_files(pattern) -%}
    {{- return(lake_empty_table(name, 'dims')) -}}
  {%- endif -%}
  {%- set files = "read_parquet(" ~ lake_quote(pattern) ~ ", hive_partitioning = true, union_by_name = true, hive_types = {'date': 'DATE'})" -%}
  {{- return("(select * exclude (date) from " ~ files ~ " where date = (select max(date) from " ~ files ~ "))") -}}
{%- endmacro %}


{% macro lake_empty_table(name, source_name='lake') -%}
  {%- set matches = graph.sources.values()
        | selectattr('source_name', 'equalto', source_name)
        | selectattr('name', 'equalto', name)
        | list -%}
  {%- if matches | length != 1 -%}
    {{- exceptions.raise_compiler_error('lake table ' ~ name ~ ' is not declared in source ' ~ source_name) -}}
  {%- endif -%}
  {%- set columns = [] -%}
  {%- for column in matches[0].columns.values() -%}
    {%- if not column.data_type -%}
      {{- exceptions.raise_compiler_error('source ' ~ source_name ~ '.' ~ name ~ '.' ~ column.name ~ ' has no data_type') -}}
    {%- endif -%}
    {%- do columns.append('cast(null as ' ~ column.data_type ~ ') as ' ~ adapter.quote(column.name)) -%}
  {%- endfor -%}
  {{- return('(select ' ~ columns | join(', ') ~ ' where false)') -}}
{%- endmacro %}

-- A processor's discount id stands for one code of a program (docs/codes.md): with two codes sharing one, a
-- sale carrying it could only be matched to the older active one, and the other partner would never earn
-- from it without anybody being told. Now the second is refused (409), as a taken name is; like a name, an
-- id stays taken by a deactivated code (a discount still in circulation never starts earning for someone
-- else).
--
-- Codes stored before this migration that share an id keep it on the code the attribution picked (the
-- oldest active one, else the oldest) and lose it on the others, whose entry matched nothing.
do $$
declare
  p text;
begin
  foreach p in array array['stripe', 'paddle', 'lemonsqueezy', 'polar'] loop
    execute format($f$
      with ranked as (
        select id, row_number() over (partition by program_id, processor_ids ->> %1$L
                                      order by status <> 'active', id) as n
        from partner_codes where processor_ids ? %1$L)
      update partner_codes pc set processor_ids = pc.processor_ids - %1$L
      from ranked where ranked.id = pc.id and ranked.n > 1$f$, p);
    execute format(
      'create unique index partner_codes_%1$s_id on partner_codes (program_id, (processor_ids ->> %1$L)) '
      'where processor_ids ? %1$L', p);
  end loop;
end
$$;

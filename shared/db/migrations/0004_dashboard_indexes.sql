-- GET /api/tracking/status counts test click and lead events (up to 10) and reads the latest one. Test
-- events are few while a program's real events can be millions: these partial indexes hold only the test
-- rows, so both reads are index lookups instead of a scan of the program's events.
create index click_events_program_test on click_events (program_id, click_timestamp desc, event_id desc)
  where is_test;
create index lead_events_program_test on lead_events (program_id, lead_timestamp desc, id desc)
  where is_test;

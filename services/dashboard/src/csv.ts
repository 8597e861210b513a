// The CSV writer lives in shared/csv.ts: the dashboard's exports and the API's payout files use the same one.
export * from '../../../shared/csv.ts';

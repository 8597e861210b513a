// `svc --help`: every command and option. The command tables (bin/cli/commands/) follow its groups.
export const HELP = `svc: manage affiliate programs and send test events

Usage: svc <command> [arguments] [options]

Session
  login --email <e> [--password <p>]     log in and remember the session (password: prompt or $SVC_PASSWORD)
  logout                                 end the remembered session
  signup --email <e> [--password <p>] [--name <n>] [--workspace <w>]

Programs
  programs list
  programs get <id>
  programs create --name <n> [--slug s] [--cookie-days n] [--currency c] [--percent p | --flat-cents n] [--origins a,b]
  programs update <id> [--name n] [--slug s] [--cookie-days n] [--currency c] [--percent p | --flat-cents n] [--origins a,b]
      both also take [--hold-days n] [--min-payout-cents n]   (payouts, docs/payouts.md)
  programs delete <id>
  programs go-live <id>
  programs regenerate-token <id>
Partners, links, commissions
  partners list <programId>
  partners add <programId> --name <n> --email <e> [--status approved|pending]   (prints the invite_url once)
  partners approve <programId> <partnerId>              (creates a link if it has none)
  partners reject <programId> <partnerId> [--reason r]
  partners invite <programId> <partnerId>               (a new invite_url; the older one stops working)
  links list <programId> <partnerId>
  links create <programId> <partnerId> [--short-link s]
  links set <programId> <partnerId> <linkId> active|inactive
  commissions list <programId> [--status s]            (s: pending|approved|paid|reversed|refunded|review)
  commissions mark-paid <commissionId>
  commissions approve <commissionId>                   (clears a review hold)
  commissions reject <commissionId> [--reason r]       (reverses it through the ledger)
Payouts (docs/payouts.md)
  payouts preview <programId> [--partner id]           what creating payouts now would pay; writes nothing
  payouts create <programId> [--partner id,...]        one payout per partner with payable commissions
  payouts list <programId> [--status pending|paid|canceled] [--limit n] [--offset n]
  payouts show <payoutId>
  payouts export <programId> --format csv|paypal|wise [--status s] [--out file]
                                                       the program's payouts (default: pending) as a file
  payouts mark-paid <payoutId> [--reference r]         its commissions paid, the partner notified
  payouts cancel <payoutId>                            its commissions payable again
Imports (docs/importing.md: Rewardful, Dub, a CSV file; run twice, nothing twice)
  import <programId> rewardful|dub [--api-base-url u] [--campaigns id,id] [--include-inactive] [--dry-run] [--wait]
                                   the source's secret from $SVC_IMPORT_SECRET (or --secret-env NAME), else asked
  import <programId> csv --file <path> [--dry-run] [--wait]
                                   columns email (required), name, link, coupon_code, stripe_promotion_code, group
  imports campaigns <programId> rewardful|dub [--api-base-url u]   the source's campaigns (ids for --campaigns)
  imports list <programId> | imports show <programId> <importId> | imports cancel <programId> <importId>
  imports errors <programId> <importId> [--out file.csv]           the rows not brought, with their codes, as CSV
Workspace
  members list | members add --email <e> --role <r> | members remove <userId>
  keys list | keys create --name <n> [--scopes a,b] [--programs 1,2] [--expires <ISO>]
  keys update <id> [--name n] [--scopes a,b] [--programs 1,2|all] | keys revoke <id>
  processor connect --status <s> [--account <id>] [--charges] [--payouts] [--details]
  processor roll-secret
  processor events <programId> [--outcome o] [--page n] [--page-size n]
Webhooks (outbound events, docs/webhooks.md)
  webhooks list
  webhooks add <url> [--events a,b] [--programs 1,2] [--description d]   (the secret is shown once)
  webhooks test <endpointId>             send a webhook.test event to the endpoint
  webhooks deliveries <endpointId> [--status pending|delivered|failed] [--page n] [--page-size n]
  webhooks retry <deliveryId>            attempt a delivery again now
  webhooks rotate|enable|disable|delete <endpointId>
Notifications (the dashboard's bell)
  notifications [--unread] [--page n] [--page-size n]
  notifications read <id> | notifications read-all
Dashboard
  status <programId>
  events <programId> [--type click|lead|conversion] [--page n] [--page-size n] [--from ISO] [--to ISO]
  performance <programId> [--period 7d|30d|90d|all] [--from ISO --to ISO]
Test events (tracking endpoints, test mode: nothing real is touched)
  test click <programId> [--aff code]
  test lead <programId> [--customer-key k]
  test sale <programId> [--amount-cents n]

Options
  --url <base>      service base URL (default $SVC_URL or http://127.0.0.1:8080)
  --token <t>       sess_… or affk_… (default $SVC_TOKEN, then the remembered session)
  --workspace-id n  the workspace for workspace-level commands (default: your first)
  --json            print the API's JSON response
  -h, --help        this text`;

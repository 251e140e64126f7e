// The pages of the admin UI in LiteLLM's navigation order.  Each module
// exports {id, title, icon?, roles?, render(root, ctx)}; roles, when set,
// lists the user roles that see the page (the server enforces access
// anyway).
import keys from "./keys.js";
import models from "./models.js";
import usage from "./usage.js";
import teams from "./teams.js";
import orgs from "./orgs.js";
import users from "./users.js";
import customers from "./customers.js";
import budgets from "./budgets.js";
import logs from "./logs.js";
import playground from "./playground.js";
import settings from "./settings.js";

export default [keys, models, usage, teams, orgs, users, customers, budgets, logs, playground, settings];

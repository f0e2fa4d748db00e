// `npm run bench`: every benchmark, one table, each figure beside a ceiling measured in the same run (DESIGN §7).
import { positionsBench, table } from "./positions";

const { header, rows } = await positionsBench();
console.log(table(header, rows));

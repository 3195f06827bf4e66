package sweep
import ("testing";"path/filepath")
func TestPragmaTmp(t *testing.T){
 l,err:=OpenLedger(filepath.Join(t.TempDir(),"x.db")); if err!=nil{t.Fatal(err)}
 var jm string; var sy int
 l.db.QueryRow("PRAGMA journal_mode").Scan(&jm); l.db.QueryRow("PRAGMA synchronous").Scan(&sy)
 t.Log(jm, sy)
}
